// The engine's thread in the app. EngineWorker lives in its own QThread, owns the job and its
// engine, loops over step(), and reports through queued signals carrying value snapshots at a
// bounded rate (~10 per second). The GUI thread never runs model code. Every signal carries the
// job's generation id so a window can drop results of a job it has replaced.
#pragma once

#include <QObject>
#include <QString>
#include <QVector>
#include <atomic>

#include "app/generation_job.h"
#include "app/run_snapshots.h"
#include "engine/engine_stats.h"

namespace sluice {

class EngineWorker : public QObject {
  Q_OBJECT

 public:
  explicit EngineWorker(QObject* parent = nullptr);

  // Thread-safe: asks the running job to stop after the current step.
  void requestCancel() { m_cancel.store(true); }

 public slots:
  // Loads the model and runs the whole file into a new job file in the app's data folder
  // (queued from the GUI thread).
  void runJob(quint64 generation, const sluice::GenerationSpec& spec);

 signals:
  void loadProgress(quint64 generation, double fraction, const QString& stage);
  void jobStarted(quint64 generation, const QString& jobPath, const QString& modelDescription);
  void rowsFinished(quint64 generation, const QVector<sluice::RowSnapshot>& rows);
  void statsUpdated(quint64 generation, const sluice::StepStats& stats, const sluice::JobProgress& progress);
  void jobFinished(quint64 generation, int rowsFailed, bool cancelled);
  void jobFailed(quint64 generation, const QString& message);

 private:
  std::atomic<bool> m_cancel{false};
};

}  // namespace sluice

Q_DECLARE_METATYPE(sluice::JobProgress)
Q_DECLARE_METATYPE(sluice::GenerationSpec)
