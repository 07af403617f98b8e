// Saves pictures of a window to a directory every few seconds and once at the end (for demos,
// reviews and `scripts/screenshot.sh`), using QWidget::grab().
#pragma once

#include <QObject>
#include <QString>
#include <QTimer>
#include <functional>

class QWidget;

namespace sluice::ui {

class ScreenshotRecorder : public QObject {
  Q_OBJECT

 public:
  // Takes a picture of `window` every intervalS seconds (0: only when capture() is called).
  ScreenshotRecorder(QWidget* window, const QString& directory, double intervalS,
                     QObject* parent = nullptr);

  // Saves one picture named <directory>/<prefix>-<n>.png; returns its path or "" on failure.
  QString capture(const QString& prefix = "sluice");
  // As capture(), once isBusy says the window's pool reads have arrived (2 s at most), so the
  // picture shows their results rather than placeholders.
  QString captureSettled(const QString& prefix, const std::function<bool()>& isBusy);

 private:
  QWidget* m_window;
  QString m_directory;
  QTimer m_timer;
  int m_count = 0;
};

}  // namespace sluice::ui
