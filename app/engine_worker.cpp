#include "app/engine_worker.h"

#include <QElapsedTimer>

#include "engine/core/error.h"

namespace sluice {

namespace {

constexpr qint64 kEmitIntervalMs = 100;

RowSnapshot snapshot(const RowOutcome& outcome) {
  const auto& j = outcome.json;
  RowSnapshot row;
  row.rowIndex = static_cast<int>(outcome.row_idx);
  row.id =
      QString::fromStdString(j["id"].is_string() ? j["id"].get<std::string>() : j["id"].dump());
  row.prompt = QString::fromStdString(outcome.row->prompt);
  row.promptTokens = j.value("prompt_tokens", 0);
  if (j.contains("samples")) {
    const auto& first = j["samples"][0];
    row.output = QString::fromStdString(first.value("output", ""));
    row.outputTokens = first.value("output_tokens", 0);
    row.finishReason = QString::fromStdString(first.value("finish_reason", ""));
  } else {
    row.output = QString::fromStdString(j.value("output", ""));
    row.outputTokens = j.value("output_tokens", 0);
    row.finishReason = QString::fromStdString(j.value("finish_reason", ""));
  }
  row.totalMs = j["timings"].value("total_ms", 0.0);
  row.error = QString::fromStdString(outcome.error);
  return row;
}

}  // namespace

EngineWorker::EngineWorker(QObject* parent) : QObject(parent) {
  qRegisterMetaType<sluice::RowSnapshot>();
  qRegisterMetaType<QVector<sluice::RowSnapshot>>();
  qRegisterMetaType<sluice::StepStats>();
  qRegisterMetaType<sluice::GenerationJobSpec>();
}

void EngineWorker::runJob(quint64 generation, const sluice::GenerationJobSpec& spec) {
  m_cancel.store(false);
  try {
    GenerationJob job(spec);
    LoadOptions load;
    load.on_progress = [&](const LoadProgress& p) {
      emit loadProgress(generation, p.fraction, QString::fromStdString(p.stage));
      return !m_cancel.load();
    };
    job.load(load);
    emit jobStarted(generation, static_cast<int>(job.rows().size()),
                    QString::fromStdString(job.session().model->config.describe()));

    QVector<RowSnapshot> pending;
    QElapsedTimer since_emit;
    since_emit.start();
    StepStats last_stats;
    int last_rows_done = 0;
    auto flush = [&] {
      if (!pending.isEmpty()) emit rowsFinished(generation, pending);
      pending.clear();
      emit statsUpdated(generation, last_stats, last_rows_done);
      since_emit.restart();
    };
    const size_t failed = job.run([&](const RowOutcome& row) { pending.push_back(snapshot(row)); },
                                  [&](const StepStats& stats, size_t rows_done) {
                                    last_stats = stats;
                                    last_rows_done = static_cast<int>(rows_done);
                                    if (since_emit.elapsed() >= kEmitIntervalMs) flush();
                                  },
                                  &m_cancel);
    flush();
    emit jobFinished(generation, static_cast<int>(failed), m_cancel.load());
  } catch (const Cancelled&) {
    emit jobFinished(generation, 0, true);
  } catch (const std::exception& e) {
    emit jobFailed(generation, QString::fromStdString(e.what()));
  }
}

}  // namespace sluice
