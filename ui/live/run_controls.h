// Start, Pause/Resume and Cancel, with the run's progress bar and a one-line summary. Start is
// enabled only while idle and ready (a model and a file loaded, or a job to resume); Cancel asks
// for confirmation before it stops a run (no key press alone stops one).
#pragma once

#include <QWidget>
#include <optional>

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
  // Whether there is something to start; Start is enabled while idle and ready.
  void setReady(bool ready);
  bool isReady() const { return m_ready; }
  // Progress as rows finished (resumed ones included) of rowsTotal (-1 while unknown).
  void setProgress(qint64 rowsDone, qint64 rowsTotal);
  // Forgets the rows' progress: an empty bar, no text.
  void clearProgress();
  void setLoading(double fraction, const QString& stage);
  // Clears what loading showed (it succeeded or failed): the rows' progress as it was before
  // (a job opened before the model loaded keeps its bar), else an empty bar; no stage.
  void clearLoading();
  QProgressBar* progressBar() const { return m_progress; }
  // The bar's text (rows of total, percent), shown beside the bar rather than over its fill.
  QLabel* progressText() const { return m_progressText; }
  QString statusText() const;

  QPushButton* startButton() const { return m_start; }
  QPushButton* pauseButton() const { return m_pause; }
  QPushButton* cancelButton() const { return m_cancel; }

 signals:
  void startClicked();
  void pauseToggled(bool paused);
  void cancelClicked();
  // The state, readiness or pause changed (which buttons are enabled or checked).
  void stateChanged();

 private:
  void showProgressText();

  struct RowsProgress {
    qint64 rowsDone = 0;
    qint64 rowsTotal = -1;
  };

  State m_state = State::Idle;
  bool m_ready = false;
  QPushButton* m_start = nullptr;
  QPushButton* m_pause = nullptr;
  QPushButton* m_cancel = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_progressText = nullptr;
  QLabel* m_label = nullptr;
  std::optional<RowsProgress> m_rows;  // what setProgress showed last
};

}  // namespace sluice::ui
