// Start, Pause/Resume and Cancel, with the run's progress bar and a one-line summary.
#pragma once

#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;

namespace sluice::ui {

class RunControls : public QWidget {
  Q_OBJECT

 public:
  enum class State { Idle, Loading, Running, Paused, Cancelling };

  explicit RunControls(QWidget* parent = nullptr);

  void setState(State state);
  State state() const { return m_state; }
  // Progress as a fraction of the input file read and the rows finished so far.
  void setProgress(double fileFraction, qint64 rowsDone);
  void setLoading(double fraction, const QString& stage);

  QPushButton* startButton() const { return m_start; }
  QPushButton* pauseButton() const { return m_pause; }
  QPushButton* cancelButton() const { return m_cancel; }

 signals:
  void startClicked();
  void pauseToggled(bool paused);
  void cancelClicked();

 private:
  State m_state = State::Idle;
  QPushButton* m_start = nullptr;
  QPushButton* m_pause = nullptr;
  QPushButton* m_cancel = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_label = nullptr;
};

}  // namespace sluice::ui
