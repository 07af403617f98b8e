// The Pipeline tab: a multi-step job (app/pipeline) run from the app. The person opens a
// description file and presses Run; the steps show as a list — each with its state (waiting,
// running, cached: its key had not changed, done, stopped), a progress bar for the model steps,
// rows in and out, model calls, tokens and time — while PipelineWorker runs them on its own
// thread. When the run ends, "Review pairs" opens the generation job in the Pairs tab (the
// judge's scores pre-filled) and "Open report" the run's HTML report.
#pragma once

#include <QString>
#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;
class QThread;
class QTreeWidget;

namespace sluice {
class PipelineWorker;
}

namespace sluice::ui {

class PipelineView final : public QWidget {
  Q_OBJECT

 public:
  // The tree's columns.
  enum Column : int { Step, State, Progress, Rows, Calls, Tokens, Time, Note, NumColumns };

  explicit PipelineView(QWidget* parent = nullptr);
  ~PipelineView() override;

  // Chooses the description to run (and the folder; "" : beside it).
  void setDescription(const QString& file, const QString& dir = {});
  // Runs the chosen description (what the Run button does).
  void start();
  bool isRunning() const { return m_running; }

  // For tests and scripts: the steps list, the state text of step i, the generation job and the
  // report of the last finished run.
  QTreeWidget* stepsList() const { return m_steps; }
  QString stepState(int i) const;
  QString generateJob() const { return m_generateJob; }
  QString reportPath() const { return m_reportPath; }

 signals:
  // Review the generation job's pairs (the main window shows the Pairs tab on it).
  void reviewPairsRequested(const QString& jobPath);
  // The run ended: finished, stopped or failed.
  void runEnded();

 private:
  void chooseDescription();
  void onLoaded(const QStringList& steps, const QString& dir);
  void onStepStarted(int index);
  void onStepProgress(int index, qint64 done, qint64 total, double tokensPerSecond);
  void onStepDone(int index, bool cached, qint64 rowsIn, qint64 rowsOut, qint64 modelCalls,
                  qint64 generatedTokens, double seconds, const QString& note);
  void onFinished(const QString& generateJob, const QString& exportDir, const QString& reportPath,
                  qint64 rowsExported);
  void onEnded(const QString& message);
  void setState(int index, const QString& state);
  QProgressBar* progressBar(int index) const;
  void updateButtons();

  QLabel* m_file = nullptr;
  QLabel* m_status = nullptr;
  QPushButton* m_open = nullptr;
  QPushButton* m_run = nullptr;
  QPushButton* m_stop = nullptr;
  QPushButton* m_review = nullptr;
  QPushButton* m_report = nullptr;
  QTreeWidget* m_steps = nullptr;
  QThread* m_thread = nullptr;
  PipelineWorker* m_worker = nullptr;
  QString m_description, m_dir, m_generateJob, m_reportPath, m_exportDir;
  bool m_running = false;
};

}  // namespace sluice::ui
