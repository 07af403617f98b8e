// The engine's thread in the app. EngineWorker lives in its own QThread and owns the loaded
// model and the running job. The GUI sends commands as queued calls (load a model, run a job,
// run a row alone) or, for what must act during a run, through atomic flags (pause, cancel);
// the worker answers with value snapshots through queued signals at a bounded rate: rows and
// statistics about ten times a second, the KV block map and memory twice a second. Every
// signal carries the command's generation id, so a window drops results of a job it replaced.
// Statistics are the job's own: time since the job started, tokens and preemptions during it
// (the engine service, kept across jobs, counts from its start).
// The GUI thread never runs model code.
#pragma once

#include <QObject>
#include <QString>
#include <QThreadPool>
#include <QVector>
#include <atomic>
#include <memory>
#include <mutex>

#include "app/background_row_count.h"
#include "app/generation_job.h"
#include "app/run_snapshots.h"

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

 private:
  void runLoop(quint64 generation, GenerationJob& job, const BackgroundRowCount& rowCount);
  void runRowAlone(GenerationJob& job, quint64 generation, qint64 rowIndex);

  std::atomic<bool> m_cancel{false};
  std::atomic<bool> m_pause{false};
  std::shared_ptr<const ModelSession> m_session;  // the loaded model
  QString m_sessionPath;
  // The loaded model's engine service, kept across jobs run with the same device and engine
  // options (m_serviceKey), so the weights stay on the backend.
  std::shared_ptr<EngineService> m_service;
  QString m_serviceKey;
  // The last job once loaded (null while one loads), kept for startRowAlone: written by the
  // worker's thread, read by any (under m_jobMutex); a row running alone holds its job.
  std::mutex m_jobMutex;
  std::shared_ptr<GenerationJob> m_job;
  bool m_isJobLoading = false;
  std::atomic<bool> m_isClosing{false};  // aborts the rows running alone
  QThreadPool m_rowAlonePool;            // last: joined before the members above go
};

}  // namespace sluice

Q_DECLARE_METATYPE(sluice::GenerationSpec)
Q_DECLARE_METATYPE(sluice::JobProgress)
