// The engine's thread in the app: a thin Qt adapter over ModelHost (app/model_host.h), which owns
// the loaded model and its engine service and lends them to jobs, rows run alone and the server.
// EngineWorker lives in its own QThread and runs the job. The GUI sends commands as queued calls
// (load a model, run a job, run a row alone) or, for what must act during a run, through atomic
// flags (pause, cancel); the worker answers with value snapshots through queued signals at a
// bounded rate: rows and statistics about ten times a second, the KV block map and memory twice
// a second. Every signal carries the command's generation id, so a window drops results of a job
// it replaced. Statistics are the job's own: time since the job started, tokens and preemptions
// during it (the engine service, kept across jobs, counts from its start).
// The loaded model can be served over HTTP (startServing) from the engine service the jobs use,
// so HTTP requests and a job's rows batch together; between jobs a timer on the worker's thread
// reports the served traffic's statistics instead (servingStatsUpdated).
// The GUI thread never runs model code.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QThreadPool>
#include <QTimer>
#include <QVector>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

#include "app/background_row_count.h"
#include "app/generation_job.h"
#include "app/model_host.h"
#include "app/run_snapshots.h"
#include "app/step_stats_baseline.h"

namespace sluice {

class EngineWorker : public QObject {
  Q_OBJECT

 public:
  explicit EngineWorker(QObject* parent = nullptr);
  ~EngineWorker() override;

  // Thread-safe flags, read by the worker between steps.
  void requestCancel() { m_cancel.store(true); }
  void setPaused(bool paused) { m_pause.store(paused); }
  bool isPaused() const { return m_pause.load(); }

  // Generates a finished row of the current job again on its own and reports whether it
  // matches (rowAloneFinished). Thread-safe and returns at once: the row runs in a thread of its
  // own on the job's engine service, beside the job's rows, whether the job runs, is paused or
  // has ended; rowAloneWaiting says what it waits for when it cannot start at once.
  void startRowAlone(quint64 generation, qint64 rowIndex);

  // Serves the loaded model over HTTP with `options` (served_model_name set, defaults from
  // spec.sampling without its grammar) on the engine service the jobs use; when there is none
  // yet, builds it for spec's device and engine options, as a job would (a later job with the
  // same options reuses it; while a job loads, serving waits for the job's engine). Thread-safe
  // and returns at once (a job may be running): answers with servingStarted, or servingFailed
  // naming the address and port.
  void startServing(const sluice::ServerOptions& options, const sluice::GenerationSpec& spec);
  // Stops serving (requests in flight are answered first); answers with servingStopped.
  // Thread-safe and returns at once.
  void stopServing();

 public slots:
  // Finds the GPUs a run can use; answers with devicesProbed.
  void probeDevices();
  // Loads a model, replacing the loaded one once it has loaded (a failed or cancelled load keeps
  // it); cancellable with requestCancel().
  void loadModel(quint64 generation, const QString& path, const QString& tokenizerPath);
  // Runs a new job at jobPath (resume == false) or resumes the job at jobPath (spec ignored).
  // Reuses the loaded model when its path matches; a remote job (spec.remote) loads none and
  // leaves the loaded one as it is.
  void runJob(quint64 generation, const sluice::GenerationSpec& spec, const QString& jobPath,
              bool resume);
  // Exports a job file (format: jsonl, csv, alpaca, openai, sharegpt, dpo).
  void exportJob(quint64 generation, const QString& jobPath, const QString& format,
                 const QString& outputPath);

 signals:
  void devicesProbed(const sluice::DeviceReport& report);
  void modelLoadProgress(quint64 generation, double fraction, const QString& stage);
  void modelLoaded(quint64 generation, const sluice::ModelSummary& model);
  void modelLoadFailed(quint64 generation, const QString& message);

  // backendDescription: Backend::describe of the job's engine ("cpu", "cuda:0 NVIDIA ...: bf16
  // ...") or, for a remote job, RemoteDriver::describe ("1 endpoint (http://...), model m, ...").
  void jobStarted(quint64 generation, const QString& jobPath, const QString& backendDescription);
  void rowsFinished(quint64 generation, const QVector<sluice::RowSnapshot>& rows);
  void statsUpdated(quint64 generation, const sluice::StepStats& stats,
                    const sluice::JobProgress& progress);
  void kvMapUpdated(quint64 generation, const sluice::KvBlockMap& map);
  void memoryUpdated(quint64 generation, const sluice::MemorySample& sample);
  void jobFinished(quint64 generation, const sluice::JobProgress& progress, bool cancelled);
  void jobFailed(quint64 generation, const QString& message);

  void rowAloneWaiting(quint64 generation, qint64 rowIndex, const QString& reason);
  void rowAloneFinished(quint64 generation, qint64 rowIndex, bool identical,
                        const QString& details);
  void exportFinished(quint64 generation, bool ok, const QString& message);

  // url: the API's base, http://HOST:PORT/v1.
  void servingStarted(const QString& url, const QString& modelName, int port);
  void servingStopped(const QString& reason);
  void servingFailed(const QString& message);
  // The served traffic while no job runs (a job's statsUpdated cover it while one does), at a
  // bounded rate and only when the engine has stepped, then once when it has nothing left to do
  // (no rates, nothing running): time and counters since the series started (startsSeries: the
  // first of a series, after serving started or a job ended).
  void servingStatsUpdated(const sluice::StepStats& stats, bool startsSeries);
  void servingMapUpdated(const sluice::KvBlockMap& map, const sluice::MemorySample& sample);

 private:
  // The host's news about serving, as signals.
  ServingEvents servingEvents();
  LoadOptions loadOptions(quint64 generation);
  void setJob(std::shared_ptr<GenerationJob> job, bool isLoading);
  void runLoop(quint64 generation, GenerationJob& job, const BackgroundRowCount& rowCount);
  void runRowAlone(GenerationJob& job, quint64 generation, qint64 rowIndex);
  // Counts the served traffic of service from now on, in a series of its own (its counters are
  // read here, on the calling thread).
  void beginServedSeries(const std::shared_ptr<EngineService>& service);
  // On the worker's thread: polls the served traffic while no job runs.
  void startPolling(const EngineService* service, const StepStats& before, int64_t numSteps);
  void pollServing();

  std::atomic<bool> m_cancel{false};
  std::atomic<bool> m_pause{false};
  std::atomic<bool> m_isClosing{false};  // aborts the rows running alone
  // The last job once loaded (null while one loads), kept for startRowAlone: written by the
  // worker's thread, read by any; a row running alone holds its job.
  std::mutex m_jobMutex;
  std::shared_ptr<GenerationJob> m_job;
  bool m_isJobLoading = false;
  // The worker's thread only: the served traffic's statistics between jobs.
  QTimer* m_pollTimer = nullptr;
  int64_t m_numStepsPolled = -1;
  const EngineService* m_polledService = nullptr;  // identity only, never dereferenced
  std::optional<StepStatsBaseline> m_servedBaseline;
  bool m_isSeriesStart = false;
  bool m_isServedIdle = true;   // the plots' last served point says nothing runs
  StepStats m_lastServedStats;  // rebased
  QElapsedTimer m_sinceServedMap;
  QThreadPool m_servePool;  // one thread: serving commands in order
  // Last: destroyed first, it stops serving and waits for the rows running alone (which use the
  // members above).
  std::unique_ptr<ModelHost> m_host;
};

}  // namespace sluice

Q_DECLARE_METATYPE(sluice::GenerationSpec)
Q_DECLARE_METATYPE(sluice::JobProgress)
