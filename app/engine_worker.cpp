#include "app/engine_worker.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QStandardPaths>

#include "engine/core/error.h"

namespace sluice {

namespace {

constexpr qint64 kEmitIntervalMs = 100;

RowSnapshot snapshot(const RowResult& r) {
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
  row.queueMs = r.queue_ms;
  row.ttftMs = r.ttft_ms;
  row.totalMs = r.total_ms;
  row.error = QString::fromStdString(r.error);
  return row;
}

// A new job file in the app's data folder, named by the time it starts.
QString new_job_path() {
  const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/jobs";
  QDir().mkpath(dir);
  return dir + "/" + QDateTime::currentDateTimeUtc().toString("yyyyMMdd-HHmmss-zzz") + ".sluicejob";
}

}  // namespace

EngineWorker::EngineWorker(QObject* parent) : QObject(parent) {
  qRegisterMetaType<sluice::RowSnapshot>();
  qRegisterMetaType<QVector<sluice::RowSnapshot>>();
  qRegisterMetaType<sluice::StepStats>();
  qRegisterMetaType<sluice::GenerationSpec>();
  qRegisterMetaType<sluice::JobProgress>();
}

void EngineWorker::runJob(quint64 generation, const sluice::GenerationSpec& spec) {
  m_cancel.store(false);
  try {
    const QString jobPath = new_job_path();
    auto job = GenerationJob::create(spec, jobPath.toStdString());
    LoadOptions load;
    load.on_progress = [&](const LoadProgress& p) {
      emit loadProgress(generation, p.fraction, QString::fromStdString(p.stage));
      return !m_cancel.load();
    };
    job->load(load);
    emit jobStarted(generation, jobPath, QString::fromStdString(job->session().model->config.describe()));

    QVector<RowSnapshot> pending;
    QElapsedTimer sinceEmit;
    sinceEmit.start();
    StepStats lastStats;
    JobProgress lastProgress;
    auto flush = [&] {
      if (!pending.isEmpty()) emit rowsFinished(generation, pending);
      pending.clear();
      emit statsUpdated(generation, lastStats, lastProgress);
      sinceEmit.restart();
    };
    const RunSummary summary = job->run(
        [&](const RowResult& row, double) { pending.push_back(snapshot(row)); },
        [&](const StepStats& stats, const JobProgress& progress) {
          lastStats = stats;
          lastProgress = progress;
          if (sinceEmit.elapsed() >= kEmitIntervalMs) flush();
        },
        &m_cancel);
    lastProgress = summary.progress;
    flush();
    if (!summary.stop_error.empty()) {
      emit jobFailed(generation, QString::fromStdString(summary.stop_error));
      return;
    }
    emit jobFinished(generation, static_cast<int>(summary.progress.rows_failed + summary.progress.rows_skipped),
                     summary.is_cancelled);
  } catch (const Cancelled&) {
    emit jobFinished(generation, 0, true);
  } catch (const std::exception& e) {
    emit jobFailed(generation, QString::fromStdString(e.what()));
  }
}

}  // namespace sluice
