#include "ui/window/main_window.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QKeySequence>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QShortcut>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cstdio>

#include "engine/jobs/job_store.h"
#include "ui/common/number_format.h"
#include "ui/jobs/job_naming.h"
#include "ui/jobs/jobs_view.h"
#include "ui/live/kv_block_map_widget.h"
#include "ui/live/live_plots.h"
#include "ui/live/run_controls.h"
#include "ui/live/run_status.h"
#include "ui/live/timeline_panel.h"
#include "ui/pairs/pair_review_view.h"
#include "ui/pipeline/pipeline_view.h"
#include "ui/results/export_dialog.h"
#include "ui/results/results_model.h"
#include "ui/results/results_panel.h"
#include "ui/serve/serve_panel.h"
#include "ui/setup/dataset_panel.h"
#include "ui/setup/long_prompt_question.h"
#include "ui/setup/model_panel.h"
#include "ui/setup/parameters_panel.h"
#include "ui/setup/remote_servers_panel.h"
#include "ui/setup/run_spec.h"
#include "ui/setup/setup_steps.h"
#include "ui/setup/structured_output_panel.h"
#include "ui/window/screenshot_recorder.h"
#include "ui/window/status_label.h"
#include "ui/window/window_fit.h"

namespace sluice::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("Sluice");
  m_clock.start();
  buildUi();
  buildMenus();
  m_worker = new EngineWorker;
  m_worker->moveToThread(&m_engineThread);
  connect(&m_engineThread, &QThread::finished, m_worker, &QObject::deleteLater);
  connectWorker();
  connectServing();
  m_engineThread.start();
  QMetaObject::invokeMethod(m_worker, &EngineWorker::probeDevices, Qt::QueuedConnection);
  m_resultsRefresh.setInterval(250);  // the table pulls new rows from the job at most 4x a second
  m_resultsRefresh.setSingleShot(true);
  connect(&m_resultsRefresh, &QTimer::timeout, m_results, &ResultsPanel::refresh);
  restoreSettings();
  setJobsDirectory(jobsDirectory());
  updateSetupSteps();
}

MainWindow::~MainWindow() {
  m_worker->requestCancel();
  m_worker->setPaused(false);
  m_engineThread.quit();
  m_engineThread.wait();
}

void MainWindow::buildUi() {
  m_modelPanel = new ModelPanel(this);
  m_dataset = new DatasetPanel(this);
  m_parameters = new ParametersPanel(this);
  auto* setup = m_setup = new SetupSteps(this);
  setup->setObjectName("setupSteps");
  setup->addStep(m_modelPanel, tr("Model"));
  setup->addStep(m_dataset, tr("Instructions"));
  setup->addStep(m_parameters, tr("Parameters"));
  m_serve = new ServePanel(this);
  setup->addStep(m_serve, tr("Server (optional)"), /*isNumbered=*/false);
  setup->setMinimumWidth(360);

  m_runControls = new RunControls(this);
  m_plots = new LivePlots(this);
  m_kvMap = new KvBlockMapWidget(this);
  m_timeline = new TimelinePanel(this);
  m_results = new ResultsPanel(this);
  m_tabs = new QTabWidget(this);
  m_tabs->addTab(m_plots, tr("Live"));
  m_tabs->addTab(m_kvMap, tr("KV blocks"));
  m_tabs->addTab(m_timeline, tr("Timeline"));
  m_tabs->addTab(m_results, tr("Results"));
  m_pairs = new PairReviewView(this);
  m_tabs->addTab(m_pairs, tr("Pairs"));
  connect(m_results, &ResultsPanel::jobPathChanged, m_pairs, &PairReviewView::setJobPath);
  m_jobs = new JobsView(this);
  m_tabs->addTab(m_jobs, tr("Jobs"));
  m_pipeline = new PipelineView(this);
  m_tabs->addTab(m_pipeline, tr("Pipeline"));
  connect(m_pipeline, &PipelineView::reviewPairsRequested, this, [this](const QString& job) {
    m_pairs->setJobPath(job);
    m_tabs->setCurrentWidget(m_pairs);
  });

  auto* right = new QWidget(this);
  auto* rightLayout = new QVBoxLayout(right);
  // The same margins as the setup's pages: no control or label sits on the window's edge.
  rightLayout->setContentsMargins(SetupSteps::kMarginPx / 2, SetupSteps::kMarginPx,
                                  SetupSteps::kMarginPx, SetupSteps::kMarginPx / 2);
  rightLayout->addWidget(m_runControls);
  rightLayout->addWidget(m_tabs, 1);
  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->addWidget(setup);
  splitter->addWidget(right);
  splitter->setStretchFactor(1, 1);
  splitter->setSizes({380, 900});
  setCentralWidget(splitter);

  // Status texts elide instead of overlapping: the rows' line takes what the others leave.
  m_statusRows = new StatusLabel(this);
  m_statusTokens = new StatusLabel(this);
  m_statusTime = new StatusLabel(this);
  m_statusRows->setContentsMargins(SetupSteps::kMarginPx / 2, 0, 0, 0);
  m_statusRows->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  statusBar()->addWidget(m_statusRows, 1);
  statusBar()->addPermanentWidget(m_statusTokens);
  statusBar()->addPermanentWidget(m_statusTime);
  m_statusServing = new StatusLabel(this);
  // Apart from the run's texts beside it ("ETA 1:19   Serving …").
  m_statusTime->setContentsMargins(SetupSteps::kMarginPx, 0, 0, 0);
  m_statusServing->setContentsMargins(SetupSteps::kMarginPx, 0, 0, 0);
  statusBar()->addPermanentWidget(m_statusServing);
  m_statusRows->setText(tr("Open a model and an instruction file, then Start."));
  // The preferred size where the screen has room; a smaller screen gets its available area.
  const QScreen* shownOn = screen() ? screen() : QGuiApplication::primaryScreen();
  resize(fittedWindowSize(QSize(1280, 800), shownOn ? shownOn->availableGeometry() : QRect()));

  connect(m_runControls, &RunControls::startClicked, this, &MainWindow::start);
  connect(m_runControls, &RunControls::pauseToggled, this, &MainWindow::setPaused);
  connect(m_runControls, &RunControls::cancelClicked, this, &MainWindow::confirmCancel);
  connect(m_modelPanel, &ModelPanel::modelPathChosen, this,
          [this](const QString& path, const QString& tokenizer) { loadModel(path, tokenizer); });
  connect(m_modelPanel, &ModelPanel::cancelLoadRequested, this,
          [this] { m_worker->requestCancel(); });
  connect(m_dataset, &DatasetPanel::datasetChosen, this, [this](const QString& path) {
    m_settings.addRecentDataset(path);
    m_isDatasetLoaded = false;
    m_numDatasetRows = -1;
    updateReady();
  });
  connect(m_dataset, &DatasetPanel::datasetLoaded, this, [this](bool ok) {
    m_isDatasetLoaded = ok;
    QStringList columns;
    for (const FieldInfo& field : m_dataset->fields())
      columns << QString::fromStdString(field.name);
    m_parameters->structuredOutput()->setColumns(columns);
    if (ok) m_settings.setLastDataset(m_dataset->datasetPath());
    updateReady();
    if (ok && m_parameters->isRemote()) startIfScripted();  // no model to wait for
  });
  connect(m_dataset, &DatasetPanel::promptOptionsChanged, this, &MainWindow::updateSetupSteps);
  connect(m_dataset, &DatasetPanel::promptLengthsReady, this, [this](const QVector<int>& lengths) {
    m_promptLengths = lengths;
    m_numDatasetRows = static_cast<int>(lengths.size());
    updateMemoryPlan();
    updateSetupSteps();
  });
  connect(m_parameters, &ParametersPanel::changed, this, &MainWindow::updateMemoryPlan);
  connect(m_parameters, &ParametersPanel::changed, this, &MainWindow::updateReady);
  connect(m_parameters, &ParametersPanel::changed, this, [this] {
    m_modelPanel->setDevice(QString::fromStdString(m_parameters->device()));
    m_modelPanel->setRemote(m_parameters->isRemote()
                                ? tr("Remote: %1").arg(m_parameters->remoteServers()->summary())
                                : QString());
  });
  connect(m_jobs, &JobsView::openRequested, this, &MainWindow::openJob);
  connect(m_jobs, &JobsView::resumeRequested, this, [this](const QString& path) {
    openJob(path);
    start();
  });
  connect(m_jobs, &JobsView::exportRequested, this, [this](const QString& path) {
    ExportDialog dialog(path, this);
    dialog.exec();
  });
  connect(m_results, &ResultsPanel::rowAloneRequested, this,
          [this](qint64 rowIndex) { emit rowAloneRequested(m_generation, rowIndex); });
}

void MainWindow::connectWorker() {
  connect(this, &MainWindow::loadModelRequested, m_worker, &EngineWorker::loadModel);
  connect(this, &MainWindow::runRequested, m_worker, &EngineWorker::runJob);
  // Not queued to the worker's thread (a running job keeps it busy): the worker runs the row
  // in a thread of its own, beside the job.
  connect(this, &MainWindow::rowAloneRequested, this, [this](quint64 generation, qint64 rowIndex) {
    statusBar()->showMessage(tr("Running row %1 alone…").arg(rowIndex));
    m_worker->startRowAlone(generation, rowIndex);
  });
  connect(this, &MainWindow::exportRequested, m_worker, &EngineWorker::exportJob);
  connect(m_worker, &EngineWorker::modelLoadProgress, this,
          [this](quint64 generation, double fraction, const QString& stage) {
            if (generation != m_generation) return;
            m_modelPanel->setLoading(fraction, stage);
            m_runControls->setLoading(fraction, stage);
          });
  connect(m_worker, &EngineWorker::modelLoaded, this, &MainWindow::onModelLoaded);
  connect(m_worker, &EngineWorker::devicesProbed, this, [this](const DeviceReport& report) {
    m_parameters->setDevices(report);
    updateMemoryPlan();  // a GPU choice restored from the settings now has its size
  });
  connect(m_worker, &EngineWorker::modelLoadFailed, this, &MainWindow::onModelLoadFailed);
  connect(m_worker, &EngineWorker::jobStarted, this, &MainWindow::onJobStarted);
  connect(m_worker, &EngineWorker::rowsFinished, this, &MainWindow::onRows);
  connect(m_worker, &EngineWorker::statsUpdated, this, &MainWindow::onStats);
  connect(m_worker, &EngineWorker::kvMapUpdated, this,
          [this](quint64 generation, const KvBlockMap& map) {
            if (generation == m_generation) m_kvMap->setMap(map);
          });
  connect(m_worker, &EngineWorker::memoryUpdated, this,
          [this](quint64 generation, const MemorySample& sample) {
            if (generation == m_generation) m_plots->addMemory(sample);
          });
  connect(m_worker, &EngineWorker::jobFinished, this, &MainWindow::onJobFinished);
  connect(m_worker, &EngineWorker::jobFailed, this, &MainWindow::onJobFailed);
  connect(m_worker, &EngineWorker::rowAloneWaiting, this,
          [this](quint64, qint64 rowIndex, const QString& reason) {
            statusBar()->showMessage(tr("Row %1 alone waits: %2").arg(rowIndex).arg(reason));
          });
  connect(m_worker, &EngineWorker::rowAloneFinished, this,
          [this](quint64, qint64 rowIndex, bool identical, const QString& details) {
            statusBar()->clearMessage();
            m_results->showRowAloneResult(rowIndex, identical, details);
            emit rowAloneDone(rowIndex, identical, details);
          });
  connect(m_worker, &EngineWorker::exportFinished, this,
          [this](quint64, bool ok, const QString& message) {
            statusBar()->showMessage(message, 10000);
            emit exportDone(ok, message);
            if (m_quitWhenDone) QApplication::exit(ok ? 0 : 1);
          });
}

void MainWindow::setDevice(const QString& device) {
  m_parameters->setDevice(device.toStdString());
}

void MainWindow::restoreSettings() {
  restoreGeometry(m_settings.windowGeometry());
  restoreState(m_settings.windowState());
  // The last run's parameters only on request (restoreLastSession): a scripted launch must not
  // run on them.
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (isRunning() &&
      QMessageBox::question(this, tr("Quit Sluice"),
                            tr("A run is in progress. Stop it and quit? Finished rows stay in the "
                               "job and can be resumed.")) != QMessageBox::Yes) {
    event->ignore();
    return;
  }
  m_settings.setWindow(saveGeometry(), saveState());
  event->accept();
}

void MainWindow::preloadModel(const QString& path) {
  m_modelPanel->setModelPath(path);
  loadModel(path);
}

void MainWindow::preloadDataset(const QString& path) {
  m_dataset->setDatasetPath(path);
}

void MainWindow::setJobsDirectory(const QString& directory) {
  m_jobsDirectory = directory;
  m_jobs->setSources(directory, m_settings.recentJobs());
  m_jobs->refresh();
}

void MainWindow::openJob(const QString& path) {
  if (path.isEmpty() || isRunning()) return;
  std::optional<GenerationSpec> spec;
  std::optional<JobCounts> counts;
  try {
    const auto store = JobStore::open(path.toStdString());
    counts = store->counts();
    spec = spec_from_json(store->info().params);
  } catch (const std::exception& e) {
    // A scripted run reports a job it cannot resume when it starts; a job file that does not
    // exist yet is the scripts' business too (sluice gui --job NEW --start).
    if (QFileInfo::exists(path) && !m_quitWhenDone) {
      showError(tr("The job could not be opened"), QString::fromStdString(e.what()));
      return;
    }
  }
  m_jobPath = path;
  m_resumeJob = true;
  updateReady();
  m_results->setJobPath(path);
  m_tabs->setCurrentWidget(m_results);
  m_settings.addRecentJob(path);
  m_jobs->setSources(m_jobsDirectory, m_settings.recentJobs());
  if (spec) {
    // The panels show what the job runs with (a resume uses the stored spec, whatever they say).
    m_dataset->setDatasetPath(QString::fromStdString(spec->input_path));
    m_dataset->setPromptOptions(spec->prompt);
    m_dataset->setOnBadRow(spec->on_bad_row);
    spec->device = m_parameters->device();  // the device is this machine's choice, not the job's
    spec->num_threads = m_parameters->numThreads();
    m_parameters->setFromSpec(*spec);
  }
  // The bar shows what the job holds: a finished job reopened is full.
  if (counts && counts->total_rows >= 0)
    m_runControls->setProgress(counts->finished(), counts->total_rows);
  else
    m_runControls->clearProgress();  // rows not counted yet: an empty bar, no stale text
  m_statusRows->setText(
      tr("Job %1: Start resumes its unfinished rows.").arg(QDir::toNativeSeparators(path)));
}

void MainWindow::restoreLastFiles() {
  QStringList gone;
  const QString model = m_settings.lastModel();
  if (!model.isEmpty() && !QFileInfo::exists(model)) {
    gone << tr("the model %1").arg(QDir::toNativeSeparators(model));
  } else if (!model.isEmpty() && !m_model) {
    m_modelPanel->setModelPath(model);
    loadModel(model, m_settings.lastTokenizer());
  }
  const QString dataset = m_settings.lastDataset();
  if (!dataset.isEmpty() && !QFileInfo::exists(dataset)) {
    gone << tr("the instruction file %1").arg(QDir::toNativeSeparators(dataset));
  } else if (!dataset.isEmpty() && m_dataset->datasetPath().isEmpty()) {
    m_dataset->setDatasetPath(dataset);
  }
  if (!gone.isEmpty())
    m_statusRows->setText(tr("Not reopened (moved or deleted): %1.").arg(gone.join(tr("; "))));
}

void MainWindow::setExportWhenDone(const QString& format, const QString& path) {
  m_exportFormat = format;
  m_exportPath = path;
}

void MainWindow::showParameters(QWidget* part) {
  m_setup->setCurrentWidget(m_parameters);
  for (QWidget* above = part->parentWidget(); above; above = above->parentWidget()) {
    if (auto* scroll = qobject_cast<QScrollArea*>(above)) {
      QCoreApplication::processEvents();  // lay the page out before scrolling to part
      scroll->ensureWidgetVisible(part, 0, 0);
      return;
    }
  }
}

void MainWindow::setScreenshots(const QString& directory, double everySeconds) {
  m_screenshots = new ScreenshotRecorder(this, directory, everySeconds, this);
}

bool MainWindow::isRunning() const {
  return m_runControls->state() != RunControls::State::Idle;
}

void MainWindow::loadModel(const QString& path, const QString& tokenizerPath) {
  if (path.isEmpty() || isRunning()) return;
  // m_model stays until the new one has loaded: a failed load keeps it (so does the worker).
  m_tokenizerPath = tokenizerPath;
  m_settings.addRecentModel(path);
  m_runControls->setState(RunControls::State::Loading);
  updateSetupSteps();
  emit loadModelRequested(++m_generation, path, tokenizerPath);
}

void MainWindow::onModelLoaded(quint64 generation, const ModelSummary& model) {
  if (generation != m_generation) return;
  m_model = model;
  m_settings.setLastModel(model.path, m_tokenizerPath);
  m_runControls->clearLoading();
  m_modelPanel->setLoaded(model);
  m_dataset->setModel(model);
  m_serve->setModel(model);
  updateMemoryPlan();
  if (m_runControls->state() == RunControls::State::Loading)
    m_runControls->setState(RunControls::State::Idle);
  updateReady();
  emit modelReady();
  startIfScripted();
}

void MainWindow::startIfScripted() {
  if (!m_startWhenReady) return;
  m_startWhenReady = false;
  m_isScriptedStart = true;
  start();
}

void MainWindow::onModelLoadFailed(quint64 generation, const QString& message) {
  if (generation != m_generation) return;
  m_runControls->clearLoading();
  if (m_model) {
    m_modelPanel->setLoadFailedKeeping(message, *m_model);
    updateMemoryPlan();
  } else {
    m_modelPanel->setLoadFailed(message);
  }
  m_runControls->setState(RunControls::State::Idle);
  updateReady();
  if (m_quitWhenDone) {
    finishRun(false, message);
    return;
  }
  showError(tr("The model could not be loaded"), message);
}

void MainWindow::updateMemoryPlan() {
  if (!m_model) return;
  const ModelConfig& config = m_model->session->model->config;
  std::vector<int> lengths(m_promptLengths.begin(), m_promptLengths.end());
  const int maxTokens = m_parameters->samplingParams().max_tokens;
  if (const auto gpu = m_parameters->selectedGpu()) {
    const GpuDevicePlan device{gpu->label, gpu->total_memory_bytes,
                               static_cast<size_t>(m_model->gpuWeightBytes)};
    m_modelPanel->setMemoryPlan(
        plan_gpu_memory(config, device, m_parameters->engineConfig(), lengths, maxTokens));
    return;
  }
  m_modelPanel->setMemoryPlan(plan_memory(config, static_cast<size_t>(m_model->weightBytes),
                                          m_parameters->engineConfig(), lengths, maxTokens));
}

GenerationSpec MainWindow::currentSpec() const {
  return specFromPanels(m_model ? m_model->path : QString(), m_tokenizerPath, *m_dataset,
                        *m_parameters);
}

QString MainWindow::newJobPath() const {
  QDir().mkpath(m_jobsDirectory);
  const QString model = m_parameters->isRemote() ? QString("remote")
                        : m_model                ? m_model->path
                                                 : QString();
  return ui::newJobPath(m_jobsDirectory, m_dataset->datasetPath(), model,
                        QDateTime::currentDateTime());
}

void MainWindow::start() {
  if (isRunning()) return;
  if (!m_resumeJob &&
      (!(m_model || m_parameters->isRemote()) || m_dataset->datasetPath().isEmpty())) {
    if (m_quitWhenDone) {
      finishRun(false, tr("nothing to run: open a model and an instruction file first"));
      return;
    }
    showError(tr("Nothing to run yet"), tr("Open a model and an instruction file first."));
    return;
  }
  if (!m_parameters->isValid()) {  // the Run menu's Start, past the disabled button
    if (m_quitWhenDone) finishRun(false, m_parameters->validationError());
    return;
  }
  const int numTooLong = m_resumeJob ? 0 : countPromptsTooLong(m_promptLengths, maxModelLen());
  if (numTooLong == 0) {
    startRun(LongPromptPolicy::Fail);
  } else if (m_isScriptedStart) {
    std::fprintf(stderr,
                 "sluice gui: %d prompts do not fit the context of %d tokens; those rows fail\n",
                 numTooLong, maxModelLen());
    startRun(LongPromptPolicy::Fail);
  } else {
    askAboutLongPrompts(this, numTooLong, static_cast<int>(m_promptLengths.size()), maxModelLen(),
                        [this](std::optional<LongPromptPolicy> choice) {
                          if (choice && !isRunning()) startRun(*choice);
                        });
  }
}

int MainWindow::maxModelLen() const {
  if (!m_model || m_parameters->isRemote()) return 0;  // the servers check their own context
  const int configured = m_parameters->engineConfig().max_model_len;
  return configured > 0 ? std::min(configured, m_model->contextLength) : m_model->contextLength;
}

void MainWindow::startRun(LongPromptPolicy onLongPrompt) {
  GenerationSpec spec = currentSpec();
  spec.on_long_prompt = onLongPrompt;
  if (!m_resumeJob) {
    m_jobPath = m_newJobPath.isEmpty() ? newJobPath() : m_newJobPath;
    m_newJobPath.clear();
    m_settings.setLastSpec(spec);
    m_settings.addRecentJob(m_jobPath);
  }
  m_plots->clear();
  m_plots->setRemote(spec.remote.is_remote());
  if (spec.remote.is_remote()) {  // the servers' blocks are not seen from here
    m_kvMap->setMap(KvBlockMap{});
    m_kvMap->setEmptyText(tr("KV cache: on the servers, not reported"));
  } else {
    m_kvMap->setEmptyText(tr("no KV pool yet"));
  }
  m_timeline->clear();
  m_progress.start(nowS());
  m_summary.clear();
  m_runStartedS = nowS();
  m_statusTokens->clear();
  m_statusTime->clear();
  m_runControls->setState(RunControls::State::Running);
  m_runControls->setProgress(0, -1);
  m_statusRows->setText(tr("Starting…"));
  m_jobs->setActiveJob(m_jobPath, JobsModel::JobState::Running, JobCounts{});
  emit runRequested(++m_generation, spec, m_jobPath, m_resumeJob);
  m_resumeJob = false;
}

void MainWindow::confirmCancel() {
  if (!isRunning()) return;
  auto* box = new QMessageBox(
      QMessageBox::Question, tr("Cancel the run"),
      tr("Stop this run? Finished rows stay in the job, which can be resumed (File › Open job)."),
      QMessageBox::Yes | QMessageBox::No, this);
  box->setObjectName("confirmCancel");
  box->setDefaultButton(QMessageBox::No);
  box->setAttribute(Qt::WA_DeleteOnClose);
  connect(box, &QMessageBox::finished, this, [this, box] {
    if (box->clickedButton() == box->button(QMessageBox::Yes)) cancel();
  });
  box->open();
}

void MainWindow::cancel() {
  if (!isRunning()) return;
  m_worker->requestCancel();
  m_worker->setPaused(false);
  m_runControls->setState(RunControls::State::Cancelling);
}

void MainWindow::setPaused(bool paused) {
  if (!isRunning()) return;
  m_worker->setPaused(paused);
  m_progress.setPaused(paused, nowS());
  m_plots->setPaused(paused);
  m_runControls->setState(paused ? RunControls::State::Paused : RunControls::State::Running);
  m_jobs->setActiveJob(m_jobPath,
                       paused ? JobsModel::JobState::Paused : JobsModel::JobState::Running,
                       m_jobs->model()->activeCounts());
}

void MainWindow::onJobStarted(quint64 generation, const QString& jobPath, const QString& backend) {
  if (generation != m_generation) return;
  if (m_parameters->isRemote())
    m_modelPanel->setRemote(tr("Remote: %1").arg(backend));
  else
    m_modelPanel->setBackendDescription(backend);
  m_results->setJobPath(jobPath);
  m_statusRows->setText(tr("Running · job %1").arg(QDir::toNativeSeparators(jobPath)));
  m_jobs->refresh();  // a new job's file exists now
}

void MainWindow::onRows(quint64 generation, const QVector<RowSnapshot>& rows) {
  if (generation != m_generation) return;
  m_timeline->addRows(rows);
  if (!m_resultsRefresh.isActive()) m_resultsRefresh.start();
}

void MainWindow::onStats(quint64 generation, const StepStats& stats, const JobProgress& progress) {
  if (generation != m_generation) return;
  const double now = nowS();
  m_progress.update(now, progress.rows_done, progress.rows_resumed, progress.rows_total);
  // The backlog: rows of the job neither finished (committed or about to be) nor running.
  const qint64 backlog =
      m_progress.rowsTotal() < 0
          ? -1
          : std::max<qint64>(0, m_progress.rowsTotal() - m_progress.rowsDone() -
                                    progress.rows_committing - stats.num_running);
  m_plots->addStats(stats, backlog);
  m_summary.addStats(stats);
  m_runControls->setProgress(m_progress.rowsDone(), m_progress.rowsTotal());
  m_statusRows->setText(describeRunStatus(progress, stats));
  m_jobs->setActiveJob(
      m_jobPath, m_worker->isPaused() ? JobsModel::JobState::Paused : JobsModel::JobState::Running,
      progress.job);
  m_statusTokens->setText(tr("%1 tokens · %2")
                              .arg(formatCount(stats.total_generation_tokens),
                                   formatRate(stats.generation_tokens_per_s, tr("tok/s"))));
  m_statusTime->setText(tr("elapsed %1 · ETA %2")
                            .arg(formatDuration(m_progress.activeSeconds(now)),
                                 formatDuration(m_progress.etaSeconds())));
}

void MainWindow::onJobFinished(quint64 generation, const JobProgress& progress, bool cancelled) {
  if (generation != m_generation) return;
  m_results->refresh();
  const double now = nowS();
  const double activeS = m_progress.activeSeconds(now);
  // The counts are the job file's (earlier runs of a resumed job included), as `sluice jobs show`.
  const QString summary =
      m_summary.describe(progress.job.finished(), progress.job.failed, progress.job.skipped,
                         activeS, now - m_runStartedS - activeS);
  m_statusRows->setText(
      cancelled ? tr("Cancelled: %1. The job can be resumed (File › Open job).").arg(summary)
                : tr("Done: %1").arg(summary));
  m_statusTokens->setText(
      tr("%1 average").arg(formatRate(m_summary.averageTokensPerS(activeS), tr("tok/s"))));
  m_statusTime->setText(tr("took %1").arg(formatDuration(activeS)));
  if (progress.rows_total >= 0)
    m_runControls->setProgress(progress.rows_done + progress.rows_resumed, progress.rows_total);
  finishRun(cancelled, QString());
}

void MainWindow::onJobFailed(quint64 generation, const QString& message) {
  if (generation != m_generation) return;
  m_results->refresh();
  m_statusRows->setText(tr("Stopped: %1").arg(message));
  if (!m_quitWhenDone) showError(tr("The run stopped"), message);
  finishRun(false, message);
}

void MainWindow::updateReady() {
  updateSetupSteps();
  const bool hasInputs =
      m_resumeJob || ((m_model || m_parameters->isRemote()) && m_isDatasetLoaded);
  const QString parametersProblem = m_parameters->validationError();
  const bool ready = hasInputs && parametersProblem.isEmpty();
  m_runControls->setReady(ready);
  if (isRunning()) return;
  if (!hasInputs)
    m_statusRows->setText(m_parameters->isRemote()
                              ? tr("Open an instruction file, then Start.")
                              : tr("Open a model and an instruction file, then Start."));
  else if (!ready)
    m_statusRows->setText(tr("Start waits for valid parameters: %1").arg(parametersProblem));
  else if (!m_resumeJob)
    m_statusRows->setText(tr("Ready: press Start."));
}

void MainWindow::finishRun(bool cancelled, const QString& error) {
  m_runControls->setState(RunControls::State::Idle);
  // A run that stopped on an error shows as failed (its file cannot tell) until the next run.
  m_jobs->setActiveJob(error.isEmpty() ? QString() : m_jobPath, JobsModel::JobState::Failed,
                       m_jobs->model()->activeCounts());
  m_jobs->refresh();
  if (m_quitWhenDone && !error.isEmpty())
    std::fprintf(stderr, "sluice gui: %s\n", qPrintable(error));
  else if (m_quitWhenDone && cancelled)
    std::fprintf(stderr, "sluice gui: the run was cancelled\n");
  if (m_screenshots) {
    // One picture of every tab, so a review sees the plots, the block map, the timeline and
    // the table as the run left them.
    for (int i = 0; i < m_tabs->count(); ++i) {
      m_tabs->setCurrentIndex(i);
      m_screenshots->captureSettled(
          "final-" + m_tabs->tabText(i).toLower().replace(' ', '-'),
          [this] { return m_results->model()->isBusy() || m_pairs->isBusy(); });
    }
  }
  emit runFinished(cancelled, error);
  if (!m_quitWhenDone) return;
  if (error.isEmpty() && !cancelled && !m_exportFormat.isEmpty() && !m_jobPath.isEmpty()) {
    emit exportRequested(m_generation, m_jobPath, m_exportFormat, m_exportPath);  // quits when done
    return;
  }
  QApplication::exit(error.isEmpty() && !cancelled ? 0 : 1);
}

// Window-modal but not blocking: the event loop (and the run's updates) go on behind it.
void MainWindow::showError(const QString& title, const QString& message) {
  auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
  qWarning("%s: %s", qPrintable(title), qPrintable(message));
}

void MainWindow::exportCurrentJob() {
  if (m_jobPath.isEmpty()) {
    showError(tr("Nothing to export"), tr("Run a job or open one first (File › Open job)."));
    return;
  }
  ExportDialog dialog(m_jobPath, this);
  dialog.exec();
}

void MainWindow::openJobDialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open job"), m_jobsDirectory,
                                                    tr("Sluice jobs (*.sluicejob);;All files (*)"));
  if (!path.isEmpty()) openJob(path);
}

}  // namespace sluice::ui
