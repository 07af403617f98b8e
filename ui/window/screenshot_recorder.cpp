#include "ui/window/screenshot_recorder.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QPixmap>
#include <QThread>
#include <QWidget>

namespace sluice::ui {

ScreenshotRecorder::ScreenshotRecorder(QWidget* window, const QString& directory, double intervalS,
                                       QObject* parent)
    : QObject(parent), m_window(window), m_directory(directory) {
  QDir().mkpath(directory);
  if (intervalS > 0) {
    m_timer.setInterval(static_cast<int>(intervalS * 1000));
    connect(&m_timer, &QTimer::timeout, this, [this] { capture(); });
    m_timer.start();
  }
}

QString ScreenshotRecorder::capture(const QString& prefix) {
  const QString path =
      QString("%1/%2-%3.png").arg(m_directory, prefix).arg(m_count++, 3, 10, QChar('0'));
  return m_window->grab().save(path) ? path : QString();
}

QString ScreenshotRecorder::captureSettled(const QString& prefix,
                                           const std::function<bool()>& isBusy) {
  const QDeadlineTimer deadline(2000);
  // The first pass paints the page shown, which is what asks for its reads.
  do {
    QCoreApplication::processEvents();
    QThread::msleep(5);
  } while (isBusy() && !deadline.hasExpired());
  QCoreApplication::processEvents();
  return capture(prefix);
}

}  // namespace sluice::ui
