#include "app/pipeline/pipeline_worker.h"

#include <filesystem>

#include "app/model_host.h"
#include "app/pipeline/pipeline_runner.h"
#include "engine/grammar/grammar_cache.h"

namespace sluice {

PipelineWorker::PipelineWorker(QObject* parent) : QObject(parent) {}

void PipelineWorker::run(const QString& file, const QString& dir) {
  m_cancel = false;
  try {
    auto grammars = std::make_shared<GrammarCache>();
    PipelineDescription description = read_pipeline_description(file.toStdString(), *grammars);
    std::string folder = dir.toStdString();
    if (folder.empty()) {
      const std::filesystem::path p(file.toStdString());
      folder = (p.parent_path() / (p.stem().string() + ".pipeline")).string();
    }
    QStringList names;
    for (const PipelineStep& step : description.steps) names << QString::fromStdString(step.name);
    emit loaded(names, QString::fromStdString(folder));
    std::vector<std::string> order;
    for (const PipelineStep& step : description.steps) order.push_back(step.name);
    auto index_of = [order](const std::string& name) {
      for (size_t i = 0; i < order.size(); ++i)
        if (order[i] == name) return static_cast<int>(i);
      return -1;
    };
    ModelHost host({}, grammars);
    PipelineRunner runner(std::move(description), folder, host);
    PipelineEvents events;
    events.on_step_start = [&](const PipelineStep&, size_t index) {
      emit stepStarted(static_cast<int>(index));
    };
    events.on_step_done = [&](const StepRun& r) {
      emit stepDone(index_of(r.name), r.was_cached, r.rows_in, r.rows_out, r.model_calls,
                    r.generated_tokens, r.seconds, QString::fromStdString(r.note));
    };
    events.on_note = [&](const std::string& text) { emit note(QString::fromStdString(text)); };
    events.on_progress = [&](const std::string& step, const StepStats& stats,
                             const JobProgress& p) {
      emit stepProgress(index_of(step), p.job.finished(), p.rows_total,
                        stats.generation_tokens_per_s);
    };
    const PipelineResult result = runner.run(events, &m_cancel);
    if (result.is_cancelled) {
      emit cancelled();
      return;
    }
    emit finished(QString::fromStdString(result.generate_job),
                  QString::fromStdString(result.export_dir),
                  QString::fromStdString(result.report_path), result.rows_exported);
  } catch (const std::exception& e) {
    emit failed(QString::fromUtf8(e.what()));
  }
}

}  // namespace sluice
