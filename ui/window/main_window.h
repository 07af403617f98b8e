// The main window: setup on the left (model, instructions, parameters), the run's controls on
// top, and the run itself in tabs (live plots, KV block map, request timeline, results). The
// engine runs in EngineWorker's thread; this window only sends commands and shows snapshots.
#pragma once

#include <QElapsedTimer>
#include <QMainWindow>
#include <QThread>
#include <QTimer>
#include <memory>
#include <optional>

#include "app/engine_worker.h"
#include "ui/live/run_progress.h"
#include "ui/live/run_summary.h"
#include "ui/window/app_settings.h"

class QLabel;
class QMenu;
class QTabWidget;
class QAction;
class QToolBar;

namespace sluice::ui {

class DatasetPanel;
class JobsView;
class PipelineView;
class KvBlockMapWidget;
class LivePlots;
class ModelPanel;
class PairReviewView;
class ParametersPanel;
class ResultsPanel;
class RunControls;
class ScreenshotRecorder;
class ServePanel;
class SetupSteps;
class TimelinePanel;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Scripted start (sluice gui options) and tests.
  void preloadModel(const QString& path);
  void preloadDataset(const QString& path);
  // Shows a job's results and restores the instruction and parameter panels from its spec;
  // Start then resumes it. A job file that exists and cannot be read is refused with an error
  // (a scripted run, and a path with no file yet, are left to Start).
  void openJob(const QString& path);
  // Relaunch: opens the last model and instruction file that loaded, when they still exist
  // (the status bar says which are gone).
  void restoreLastFiles();
  // An interactive launch (`sluice gui` without options that say what to run): shows the
  // parameters of the last run started, says on the Parameters page and its step which ones
  // differ from the defaults, and reopens the last files (restoreLastFiles). A window that is
  // not told to restore starts from the defaults: a scripted launch never runs on remembered
  // settings. A device given (the command line's) replaces the last session's before it shows.
  void restoreLastSession(const QString& device = QString());
  // The file the next new job is created at (instead of a fresh name in the jobs folder); it
  // must not exist yet.
  void setNewJobPath(const QString& path) { m_newJobPath = path; }
  void setStartWhenReady(bool start) { m_startWhenReady = start; }
  // Chooses the device of the next run ("cpu", "auto", "cuda:N"), as the Engine panel would.
  void setDevice(const QString& device);
  void setQuitWhenDone(bool quit) { m_quitWhenDone = quit; }
  void setExportWhenDone(const QString& format, const QString& path);
  void setScreenshots(const QString& directory, double everySeconds);
  // Opens the Parameters page of the setup panels, scrolled so that part (a widget on it) shows.
  void showParameters(QWidget* part);

  bool isRunning() const;
  bool isModelLoaded() const { return m_model.has_value(); }
  QString currentJobPath() const { return m_jobPath; }
  RunControls* runControls() const { return m_runControls; }
  ResultsPanel* resultsPanel() const { return m_results; }
  PairReviewView* pairReview() const { return m_pairs; }
  ParametersPanel* parametersPanel() const { return m_parameters; }
  DatasetPanel* datasetPanel() const { return m_dataset; }
  ModelPanel* modelPanel() const { return m_modelPanel; }
  JobsView* jobsView() const { return m_jobs; }
  PipelineView* pipelineView() const { return m_pipeline; }
  ServePanel* servePanel() const { return m_serve; }
  SetupSteps* setupSteps() const { return m_setup; }
  QToolBar* mainToolBar() const { return m_toolBar; }
  QMenu* viewMenu() const { return m_viewMenu; }
  QTabWidget* tabs() const { return m_tabs; }
  // Opens the Server page of the setup panels ("Serve on port …").
  void showServePanel();
  // Where new jobs are saved (jobsDirectory() unless set, e.g. by a test).
  void setJobsDirectory(const QString& directory);

 public slots:
  void start();
  // Asks for confirmation (a window-modal, non-blocking question), then cancels.
  void confirmCancel();
  void cancel();
  void setPaused(bool paused);

 signals:
  // To the worker (queued).
  void loadModelRequested(quint64 generation, const QString& path, const QString& tokenizerPath);
  void runRequested(quint64 generation, const sluice::GenerationSpec& spec, const QString& jobPath,
                    bool resume);
  void rowAloneRequested(quint64 generation, qint64 rowIndex);
  void exportRequested(quint64 generation, const QString& jobPath, const QString& format,
                       const QString& path);
  // For scripts and tests.
  void modelReady();
  void runFinished(bool cancelled, const QString& error);
  void exportDone(bool ok, const QString& message);
  void rowAloneDone(qint64 rowIndex, bool identical, const QString& details);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildUi();
  void buildMenus();
  void buildRunMenu();
  void buildToolBar();
  void buildViewMenu();
  // Writes each setup step's state line ("stories260K · loaded") and whether it is done.
  void updateSetupSteps();
  void connectWorker();
  void connectServing();
  void restoreSettings();
  void loadModel(const QString& path, const QString& tokenizerPath = QString());
  void updateMemoryPlan();
  GenerationSpec currentSpec() const;
  QString newJobPath() const;
  void onModelLoaded(quint64 generation, const sluice::ModelSummary& model);
  void onModelLoadFailed(quint64 generation, const QString& message);
  void onJobStarted(quint64 generation, const QString& jobPath, const QString& modelDescription);
  void onRows(quint64 generation, const QVector<sluice::RowSnapshot>& rows);
  void onStats(quint64 generation, const sluice::StepStats& stats,
               const sluice::JobProgress& progress);
  void onJobFinished(quint64 generation, const sluice::JobProgress& progress, bool cancelled);
  void onJobFailed(quint64 generation, const QString& message);
  void finishRun(bool cancelled, const QString& error);
  // Starts the run (Start's checks done), with what to do with prompts longer than the context.
  void startRun(sluice::LongPromptPolicy onLongPrompt);
  // Starts a run asked for by setStartWhenReady once its inputs are ready (once only).
  void startIfScripted();
  int maxModelLen() const;
  void updateReady();
  double nowS() const { return m_clock.elapsed() / 1000.0; }
  void showError(const QString& title, const QString& message);
  void exportCurrentJob();
  void openJobDialog();

  QThread m_engineThread;
  EngineWorker* m_worker = nullptr;
  AppSettings m_settings;
  quint64 m_generation = 0;  // bumped by every command whose answers may go stale
  std::optional<ModelSummary> m_model;
  QString m_tokenizerPath;
  QVector<int> m_promptLengths;
  QString m_jobPath;
  QString m_newJobPath;
  bool m_resumeJob = false;
  bool m_isDatasetLoaded = false;
  bool m_startWhenReady = false;
  bool m_isScriptedStart = false;  // started by --start: nobody to ask
  bool m_quitWhenDone = false;
  QString m_exportFormat, m_exportPath;
  QElapsedTimer m_clock;  // monotonic time for the run's progress
  RunProgress m_progress;
  RunSummary m_summary;
  double m_runStartedS = 0.0;  // on m_clock
  ScreenshotRecorder* m_screenshots = nullptr;

  ModelPanel* m_modelPanel = nullptr;
  DatasetPanel* m_dataset = nullptr;
  ParametersPanel* m_parameters = nullptr;
  SetupSteps* m_setup = nullptr;
  QToolBar* m_toolBar = nullptr;
  QMenu* m_viewMenu = nullptr;
  // The menus' actions that the toolbar and the View menu show too.
  struct Actions {
    QAction* openModel = nullptr;
    QAction* openDataset = nullptr;
    QAction* exportJob = nullptr;
    QAction* start = nullptr;
    QAction* pause = nullptr;
    QAction* cancel = nullptr;
    QAction* showSetup = nullptr;
    QAction* showPlots = nullptr;
    QList<QAction*> tabs;  // in tab order
  } m_actions;
  int m_numDatasetRows = -1;  // counted prompt rows of the instruction file, -1 while unknown
  RunControls* m_runControls = nullptr;
  QTabWidget* m_tabs = nullptr;
  LivePlots* m_plots = nullptr;
  KvBlockMapWidget* m_kvMap = nullptr;
  TimelinePanel* m_timeline = nullptr;
  ResultsPanel* m_results = nullptr;
  PairReviewView* m_pairs = nullptr;
  JobsView* m_jobs = nullptr;
  PipelineView* m_pipeline = nullptr;
  ServePanel* m_serve = nullptr;
  QString m_jobsDirectory;
  QLabel* m_statusRows = nullptr;
  QLabel* m_statusTokens = nullptr;
  QLabel* m_statusTime = nullptr;
  QLabel* m_statusServing = nullptr;
  QTimer m_resultsRefresh;
};

}  // namespace sluice::ui
