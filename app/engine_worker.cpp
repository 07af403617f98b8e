#include "app/engine_worker.h"

#include <QElapsedTimer>
#include <QFile>
#include <algorithm>
#include <optional>
#include <utility>

#include "app/batch_response.h"
#include "engine/backend/device.h"
#include "engine/core/error.h"
#include "engine/export/exporters.h"
#include "engine/jobs/job_table.h"

namespace sluice {

namespace {

constexpr qint64 kRowsIntervalMs = 100;
constexpr qint64 kMapIntervalMs = 500;
constexpr int kServedPollMs = 100;

RowSnapshot snapshot(const RowResult& r, double arrivalS) {
  RowSnapshot row;
  row.rowIndex = r.row_index;
  const auto id = r.input.contains("id") ? r.input["id"] : nlohmann::ordered_json(r.row_index);
  row.id = QString::fromStdString(id.is_string() ? id.get<std::string>() : id.dump());
  row.prompt = QString::fromStdString(r.prompt);
  row.promptTokens = r.prompt_tokens;
  row.status = QString::fromUtf8(to_string(r.status));
  if (!r.samples.empty()) {
    row.output = QString::fromStdString(r.samples.front().output);
    row.outputTokens = r.samples.front().output_tokens;
    row.finishReason = QString::fromStdString(r.samples.front().finish_reason);
  }
  row.error = QString::fromStdString(r.error);
  row.arrivalS = arrivalS;
  row.queueMs = r.queue_ms;
  row.ttftMs = r.ttft_ms;
  row.totalMs = r.total_ms;
  return row;
}

// Reads "<key>: <n> kB" from /proc/meminfo; 0 when unavailable.
qint64 meminfo_bytes(const char* key) {
  QFile file("/proc/meminfo");
  if (!file.open(QIODevice::ReadOnly)) return 0;
  const QByteArray prefix = QByteArray(key) + ":";
  for (const QByteArray& line : file.readAll().split('\n')) {
    if (line.startsWith(prefix))
      return line.mid(prefix.size()).trimmed().split(' ').front().toLongLong() * 1024;
  }
  return 0;
}

// Resident memory of this process from /proc/self/statm; 0 when unavailable.
qint64 resident_bytes() {
  QFile file("/proc/self/statm");
  if (!file.open(QIODevice::ReadOnly)) return 0;
  const QList<QByteArray> fields = file.readAll().split(' ');
  return fields.size() > 1 ? fields[1].toLongLong() * 4096 : 0;
}

MemorySample memory_sample(const StepStats& stats) {
  MemorySample m;
  m.elapsedS = stats.elapsed_s;
  m.weightBytes = static_cast<qint64>(stats.memory.weight_bytes);
  m.kvPoolBytes = static_cast<qint64>(stats.memory.kv_cache_bytes);
  m.stateBytes = static_cast<qint64>(stats.memory.state_bytes);
  m.activationBytes = static_cast<qint64>(stats.memory.activation_bytes);
  m.isGpu = stats.memory.device_total_bytes > 0;
  if (m.isGpu) {
    m.freeBytes = static_cast<qint64>(stats.memory.device_free_bytes);
    m.otherBytes =
        std::max<qint64>(0, static_cast<qint64>(stats.memory.device_total_bytes) - m.freeBytes -
                                m.weightBytes - m.kvPoolBytes - m.stateBytes - m.activationBytes);
  } else {
    m.freeBytes = meminfo_bytes("MemAvailable");
    m.otherBytes = std::max<qint64>(
        0, resident_bytes() - m.weightBytes - m.kvPoolBytes - m.stateBytes - m.activationBytes);
  }
  return m;
}

// The point that ends a burst of served traffic: nothing scheduled, running or waiting, and the
// blocks still held (0 unless cached), at elapsedS.
StepStats idle_stats(StepStats last, double elapsedS, int numKvBlocksUsed) {
  last.elapsed_s = std::max(last.elapsed_s, elapsedS);
  last.step_time_ms = 0.0;
  last.num_scheduled_requests = 0;
  last.num_scheduled_tokens = 0;
  last.num_prompt_tokens = 0;
  last.num_generation_tokens = 0;
  last.prompt_tokens_per_s = 0.0;
  last.generation_tokens_per_s = 0.0;
  last.num_running = 0;
  last.num_waiting = 0;
  last.num_kv_blocks_used = numKvBlocksUsed;
  return last;
}

QString describe_samples(const std::vector<SampleResult>& samples) {
  QString text;
  for (size_t i = 0; i < samples.size(); ++i) {
    text += QString("sample %1 (%2 tokens, %3):\n%4\n")
                .arg(i)
                .arg(samples[i].output_tokens)
                .arg(QString::fromStdString(samples[i].finish_reason),
                     QString::fromStdString(samples[i].output));
  }
  return text;
}

}  // namespace

EngineWorker::EngineWorker(QObject* parent) : QObject(parent) {
  qRegisterMetaType<sluice::RowSnapshot>();
  qRegisterMetaType<QVector<sluice::RowSnapshot>>();
  qRegisterMetaType<sluice::StepStats>();
  qRegisterMetaType<sluice::GenerationSpec>();
  qRegisterMetaType<sluice::JobProgress>();
  qRegisterMetaType<sluice::ModelSummary>();
  qRegisterMetaType<sluice::KvBlockMap>();
  qRegisterMetaType<sluice::MemorySample>();
  qRegisterMetaType<sluice::MemoryPlan>();
  qRegisterMetaType<sluice::DeviceReport>();
  m_servePool.setMaxThreadCount(1);
  m_pollTimer = new QTimer(this);  // moves to the worker's thread with it
  m_pollTimer->setInterval(kServedPollMs);
  connect(m_pollTimer, &QTimer::timeout, this, &EngineWorker::pollServing);
  m_host = std::make_unique<ModelHost>(servingEvents());
}

ServingEvents EngineWorker::servingEvents() {
  ServingEvents events;
  events.started = [this](const std::string& baseUrl, const std::string& modelName, int port,
                          const std::shared_ptr<EngineService>& service) {
    beginServedSeries(service);
    emit servingStarted(QString::fromStdString(baseUrl), QString::fromStdString(modelName), port);
  };
  events.stopped = [this](ServingStop reason, const std::string& baseUrl) {
    switch (reason) {
      case ServingStop::Asked:
        emit servingStopped(
            baseUrl.empty() ? QString()
                            : tr("Stopped serving on %1.").arg(QString::fromStdString(baseUrl)));
        return;
      case ServingStop::AnotherModelLoaded:
        emit servingStopped(
            tr("Stopped serving: another model was loaded (turn serving on again to serve it)."));
        return;
      case ServingStop::JobBuildsEngine:
        emit servingStopped(
            tr("Serving stops while the job builds an engine with its options; it "
               "resumes on that engine."));
        return;
      case ServingStop::JobRunsAnotherModel:
        emit servingStopped(tr("Stopped serving: the job runs another model."));
        return;
      case ServingStop::JobStoppedBeforeEngine:
        emit servingStopped(
            tr("Stopped serving: the job stopped before its engine was built (turn serving on "
               "again)."));
        return;
    }
  };
  events.failed = [this](const std::string& message) {
    emit servingFailed(tr("Cannot serve: %1").arg(QString::fromStdString(message)));
  };
  return events;
}

void EngineWorker::probeDevices() {
  // Starting the CUDA runtime can take a while: not on the GUI thread.
  emit devicesProbed(probe_devices());
}

EngineWorker::~EngineWorker() {
  m_isClosing.store(true);
  m_servePool.waitForDone();
  m_host.reset();  // stops serving, waits for the rows running alone
}

LoadOptions EngineWorker::loadOptions(quint64 generation) {
  LoadOptions options;
  options.on_progress = [this, generation](const LoadProgress& p) {
    emit modelLoadProgress(generation, p.fraction, QString::fromStdString(p.stage));
    return !m_cancel.load();
  };
  return options;
}

void EngineWorker::loadModel(quint64 generation, const QString& path,
                             const QString& tokenizerPath) {
  m_cancel.store(false);
  try {
    const auto session = m_host->load_model(path.toStdString(), tokenizerPath.toStdString(),
                                            loadOptions(generation));
    emit modelLoaded(generation, summarize_model(session));
  } catch (const Cancelled&) {
    emit modelLoadFailed(generation, "Loading was cancelled.");
  } catch (const std::exception& e) {
    emit modelLoadFailed(generation, QString::fromStdString(e.what()));
  }
}

void EngineWorker::setJob(std::shared_ptr<GenerationJob> job, bool isLoading) {
  const std::lock_guard lock(m_jobMutex);
  m_job = std::move(job);
  m_isJobLoading = isLoading;
}

void EngineWorker::runJob(quint64 generation, const sluice::GenerationSpec& spec,
                          const QString& jobPath, bool resume) {
  m_cancel.store(false);
  m_pause.store(false);
  setJob(nullptr, true);
  try {
    // The spec carries its grammar's source: the job's service compiles it.
    std::shared_ptr<GenerationJob> job =
        resume ? GenerationJob::resume(jobPath.toStdString(), spec.device, spec.num_threads)
               : GenerationJob::create(spec, jobPath.toStdString());
    // Counted beside the load and the run, so progress is rows of a known total early on.
    const BackgroundRowCount rowCount(job->spec().input_path, job->spec().format,
                                      static_cast<int64_t>(job->spec().limit));
    // The host reuses the loaded model and its engine when the job's match, else loads and
    // builds them; a remote job's servers run the model and leave the loaded one as it is.
    const auto loadedBefore = m_host->session();
    job->load(m_host->lend_for_job(job->spec(), loadOptions(generation)));
    if (job->lease().session && job->lease().session != loadedBefore)
      emit modelLoaded(generation, summarize_model(job->lease().session));
    setJob(job, false);
    emit jobStarted(generation, jobPath, QString::fromStdString(job->service().describe()));
    runLoop(generation, *job, rowCount);
  } catch (const Cancelled&) {
    emit jobFinished(generation, JobProgress{}, true);
  } catch (const std::exception& e) {
    emit jobFailed(generation, QString::fromStdString(e.what()));
  }
  // The plots showed the job: served traffic starts a new series.
  if (const auto served = m_host->served_service()) beginServedSeries(served);
  const std::lock_guard lock(m_jobMutex);
  m_isJobLoading = false;
}

void EngineWorker::runLoop(quint64 generation, GenerationJob& job,
                           const BackgroundRowCount& rowCount) {
  QVector<RowSnapshot> pending;
  QElapsedTimer sinceRows, sinceMap;
  sinceRows.start();
  sinceMap.start();
  StepStats lastStats;
  JobProgress lastProgress;
  // A kept service's counters and clock run on from earlier jobs: the GUI gets this job's own.
  StepStatsBaseline baseline(job.service().metrics().latest_step);
  auto flushRows = [&] {
    if (!pending.isEmpty()) emit rowsFinished(generation, pending);
    pending.clear();
    emit statsUpdated(generation, lastStats, lastProgress);
    sinceRows.restart();
  };
  auto flushMap = [&] {
    if (job.is_remote()) return;  // the servers' KV blocks and memory are not seen from here
    emit kvMapUpdated(generation, job.service().kv_block_map());
    emit memoryUpdated(generation, memory_sample(lastStats));
    sinceMap.restart();
  };
  const RunSummary summary = job.run(
      [&](const RowResult& row, double arrivalS) { pending.push_back(snapshot(row, arrivalS)); },
      [&](const StepStats& stats, const JobProgress& progress) {
        lastStats = baseline.rebase(stats);
        lastProgress = progress;
        if (lastProgress.rows_total < 0) lastProgress.rows_total = rowCount.total();
        if (sinceRows.elapsed() >= kRowsIntervalMs) flushRows();
        if (sinceMap.elapsed() >= kMapIntervalMs) flushMap();
      },
      &m_cancel, &m_pause);
  lastProgress = summary.progress;
  flushRows();
  flushMap();
  if (!summary.stop_error.empty()) {
    emit jobFailed(generation, QString::fromStdString(summary.stop_error));
    return;
  }
  emit jobFinished(generation, summary.progress, summary.is_cancelled);
}

void EngineWorker::startRowAlone(quint64 generation, qint64 rowIndex) {
  std::shared_ptr<GenerationJob> job;
  bool isLoading = false;
  {
    const std::lock_guard lock(m_jobMutex);
    job = m_job;
    isLoading = m_isJobLoading;
  }
  if (!job) {
    emit rowAloneFinished(generation, rowIndex, false,
                          isLoading ? QString("The job is still loading its model: run the row "
                                              "alone once the job runs.")
                                    : QString("No job has run yet in this session: start or "
                                              "resume the job first."));
    return;
  }
  m_host->run_beside(
      [this, job, generation, rowIndex] { runRowAlone(*job, generation, rowIndex); });
}

// On a thread of the host's, beside the job's own loop.
void EngineWorker::runRowAlone(GenerationJob& job, quint64 generation, qint64 rowIndex) {
  try {
    const std::optional<RowResult> stored = JobTable::open(job.store().path())->row(rowIndex);
    const std::vector<SampleResult> alone =
        job.run_row_alone(rowIndex, &m_isClosing, [&](const std::string& reason) {
          emit rowAloneWaiting(generation, rowIndex, QString::fromStdString(reason));
        });
    bool identical = stored && stored->samples.size() == alone.size();
    for (size_t i = 0; identical && i < alone.size(); ++i) {
      identical = alone[i].output == stored->samples[i].output &&
                  alone[i].finish_reason == stored->samples[i].finish_reason;
    }
    emit rowAloneFinished(generation, rowIndex, identical,
                          identical ? QString("Identical to the output from the batch.")
                                    : "Alone the row gave:\n" + describe_samples(alone));
  } catch (const std::exception& e) {
    emit rowAloneFinished(generation, rowIndex, false, QString::fromStdString(e.what()));
  }
}

void EngineWorker::startServing(const ServerOptions& options, const GenerationSpec& spec) {
  // On m_servePool's thread: the worker's own may be busy with a job.
  m_servePool.start([this, options, spec] { m_host->serve(options, spec); });
}

void EngineWorker::stopServing() {
  m_servePool.start([this] {
    const std::optional<std::string> url = m_host->stop_serving();
    emit servingStopped(url ? tr("Stopped serving on %1.").arg(QString::fromStdString(*url))
                            : QString());
  });
}

void EngineWorker::beginServedSeries(const std::shared_ptr<EngineService>& service) {
  const EngineService* served = service.get();
  const int64_t numSteps = service->num_steps();
  const StepStats before = service->metrics().latest_step;
  // Queued: the series' state belongs to the worker's thread, which may be busy with a job.
  QMetaObject::invokeMethod(
      this, [this, served, before, numSteps] { startPolling(served, before, numSteps); },
      Qt::QueuedConnection);
}

void EngineWorker::startPolling(const EngineService* service, const StepStats& before,
                                int64_t numSteps) {
  m_polledService = service;
  m_servedBaseline.emplace(before);
  m_numStepsPolled = numSteps;
  m_isSeriesStart = true;
  m_isServedIdle = true;
  if (!m_pollTimer->isActive()) m_pollTimer->start();
}

// On the worker's thread, between jobs (a job's run loop keeps the thread, and its own
// statistics cover the served requests too).
void EngineWorker::pollServing() {
  const std::shared_ptr<EngineService> service = m_host->served_service();
  if (!service) {
    m_pollTimer->stop();
    m_polledService = nullptr;
    return;
  }
  // A server moved to another engine: its series begins when startPolling runs.
  if (service.get() != m_polledService || !m_servedBaseline) return;
  const int64_t numSteps = service->num_steps();
  if (numSteps == m_numStepsPolled) {
    // A burst ended: the lines drop to what runs now (nothing), not stay at its last rate. (A
    // slow step leaves requests running: no drop between steps.)
    if (m_isServedIdle) return;
    const ServiceMetrics metrics = service->metrics();
    if (metrics.num_running > 0 || metrics.num_waiting > 0) return;
    m_isServedIdle = true;
    m_lastServedStats =
        idle_stats(m_lastServedStats, m_servedBaseline->elapsedS(), metrics.num_kv_blocks_used);
    emit servingStatsUpdated(m_lastServedStats, false);
    return;
  }
  m_numStepsPolled = numSteps;
  const StepStats latest = m_servedBaseline->rebase(service->metrics().latest_step);
  if (m_isServedIdle && !m_isSeriesStart) {
    // A new burst after a quiet spell: the lines stay at 0 until it starts, not ramp up across
    // the spell.
    const double quietUntilS =
        std::max(m_lastServedStats.elapsed_s, latest.elapsed_s - kServedPollMs / 1000.0);
    emit servingStatsUpdated(
        idle_stats(m_lastServedStats, quietUntilS, m_lastServedStats.num_kv_blocks_used), false);
  }
  m_isServedIdle = false;
  m_lastServedStats = latest;
  emit servingStatsUpdated(m_lastServedStats, std::exchange(m_isSeriesStart, false));
  if (!m_sinceServedMap.isValid() || m_sinceServedMap.elapsed() >= kMapIntervalMs) {
    emit servingMapUpdated(service->kv_block_map(), memory_sample(m_lastServedStats));
    m_sinceServedMap.restart();
  }
}

void EngineWorker::exportJob(quint64 generation, const QString& jobPath, const QString& format,
                             const QString& outputPath) {
  try {
    const auto store = JobStore::open(jobPath.toStdString());
    const ExportStats stats = export_job(*store, parse_export_format(format.toStdString()),
                                         outputPath.toStdString(), with_batch_responses({}));
    QString message = QString("Wrote %1 records from %2 rows to %3")
                          .arg(stats.records_written)
                          .arg(stats.rows_written)
                          .arg(outputPath);
    if (stats.rows_skipped > 0)
      message += QString(" (%1)").arg(QString::fromStdString(describe_left_out(stats)));
    for (const UnreadableRow& row : stats.unreadable_rows)
      message += QString("\nRow %1 left out: %2")
                     .arg(row.row_index)
                     .arg(QString::fromStdString(row.error));
    emit exportFinished(generation, true, message);
  } catch (const std::exception& e) {
    emit exportFinished(generation, false, QString::fromStdString(e.what()));
  }
}

}  // namespace sluice
