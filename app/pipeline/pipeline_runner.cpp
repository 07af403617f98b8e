#include "app/pipeline/pipeline_runner.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "app/model_host.h"
#include "app/pipeline/curate_steps.h"
#include "app/pipeline/dataset_records.h"
#include "app/pipeline/judge_rubric.h"
#include "app/pipeline/judge_step.h"
#include "app/pipeline/pipeline_export.h"
#include "app/pipeline/step_key.h"
#include "app/pipeline/whole_file.h"
#include "engine/core/error.h"
#include "engine/grammar/grammar_source.h"
#include "engine/jobs/job_store.h"

namespace sluice {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// run.json: this run's figures per step, for scripts and tests.
void write_run_summary(const PipelineResult& result, const std::string& path) {
  Json steps = Json::array();
  for (const StepRun& s : result.steps) {
    steps.push_back({{"step", s.name},
                     {"key", s.key},
                     {"cached", s.was_cached},
                     {"rows_in", s.rows_in},
                     {"rows_out", s.rows_out},
                     {"model_calls", s.model_calls},
                     {"prompt_tokens", s.prompt_tokens},
                     {"generated_tokens", s.generated_tokens},
                     {"seconds", s.seconds},
                     {"note", s.note}});
  }
  const Json summary = {{"steps", steps},
                        {"generate_job", result.generate_job},
                        {"export_dir", result.export_dir},
                        {"rows_exported", result.rows_exported},
                        {"pairs_by_judge", result.pairs_by_judge},
                        {"pairs_by_review", result.pairs_by_review},
                        {"judge_failures", result.judge_failures}};
  write_whole_file(path, summary.dump(1) + "\n");
}

}  // namespace

PipelineRunner::PipelineRunner(PipelineDescription description, std::string dir, ModelHost& host)
    : description_(std::move(description)), dir_(std::move(dir)), host_(host) {}

std::string PipelineRunner::steps_path(const std::string& name, const std::string& key,
                                       const std::string& extension) const {
  return (fs::path(dir_) / "steps" / (name + "-" + key.substr(0, 16) + extension)).string();
}

std::string PipelineRunner::digest(const std::string& path) const {
  return file_digest(path, (fs::path(dir_) / "digests.json").string());
}

PipelineResult PipelineRunner::run(const PipelineEvents& events, const std::atomic<bool>* cancel) {
  fs::create_directories(fs::path(dir_) / "steps");
  PipelineResult result;
  ModelStepEvents model_events;
  model_events.on_note = events.on_note;
  ExportContext context;
  context.description = &description_;
  context.dir = dir_;

  auto start_step = [&](size_t index) {
    if (events.on_step_start) events.on_step_start(description_.steps[index], index);
  };
  auto finish_step = [&](StepRun run) {
    if (events.on_step_done) events.on_step_done(run);
    result.steps.push_back(std::move(run));
  };

  // generate
  const PipelineStep& generate = description_.steps.front();
  const GenerationSpec& spec = generate.generate;
  Json generate_parts = {{"step", "generate"}, {"spec", spec_key_parts(spec)}};
  if (!spec.remote.is_remote()) {
    context.model_sha256 = digest(spec.model_path);
    generate_parts["model"] = context.model_sha256;
    generate_parts["spec"].erase("model_path");
    if (!spec.tokenizer_path.empty()) {
      generate_parts["tokenizer"] = digest(spec.tokenizer_path);
      generate_parts["spec"].erase("tokenizer_path");
    }
  }
  generate_parts["input"] = digest(spec.input_path);
  generate_parts["spec"].erase("input_path");
  const std::string generate_key = step_key(generate_parts);
  const std::string generate_job = steps_path("generate", generate_key, ".sluicejob");
  result.generate_job = generate_job;
  context.generate_job = generate_job;
  {
    start_step(0);
    StepRun run{.name = "generate", .key = generate_key};
    if (is_job_complete(generate_job)) {
      run.was_cached = true;
      const JobCounts counts = JobStore::open(generate_job)->counts();
      run.rows_in = counts.total_rows;
      run.rows_out = counts.done;
    } else {
      model_events.on_progress = [&](const StepStats& s, const JobProgress& p) {
        if (events.on_progress) events.on_progress("generate", s, p);
      };
      if (!run_model_step(spec, generate_job, host_, model_events, cancel, run)) {
        result.is_cancelled = true;
        result.steps.push_back(run);
        return result;
      }
    }
    finish_step(run);
  }

  std::string upstream_key = generate_key;
  Removals removals;
  for (size_t index = 1; index < description_.steps.size(); ++index) {
    const PipelineStep& step = description_.steps[index];
    start_step(index);
    const auto start = std::chrono::steady_clock::now();
    if (step.kind == StepKind::Judge) {
      const JudgeStep& judge = step.judge;
      GenerationSpec judge_spec = judge.spec;
      Json parts = {{"step", "judge"},
                    {"wording", kJudgeRubricVersion},
                    {"rubric", step.source.value("rubric", "ultrafeedback")},
                    {"k", judge.k},
                    {"rationale_chars", judge.rationale_chars},
                    {"instructions", judge.instructions},
                    {"generated", generate_key}};
      Json judge_spec_parts = spec_key_parts(judge_spec);
      judge_spec_parts.erase("input_path");
      if (!judge_spec.remote.is_remote()) {
        parts["model"] = digest(judge_spec.model_path);
        judge_spec_parts.erase("model_path");
        context.judge_model_sha256 = parts["model"].get<std::string>();
      }
      parts["spec"] = judge_spec_parts;
      const std::string key = step_key(parts);
      StepRun run{.name = "judge", .key = key};
      const std::string input = steps_path("judge", key, ".jsonl");
      const std::string job = steps_path("judge", key, ".sluicejob");
      context.judge_job = job;
      if (!fs::exists(input)) write_judge_input(*JobStore::open(generate_job), judge, input);
      if (is_job_complete(job)) {
        run.was_cached = true;
      } else {
        judge_spec.input_path = input;
        GrammarSource schema;
        schema.kind = GrammarSourceKind::JsonSchema;
        schema.name = "the judge's answer";
        schema.text = judge_schema(judge.rubric, judge.rationale_chars);
        judge_spec.sampling.grammar = std::make_shared<const GrammarSource>(
            with_json_options(std::move(schema), judge_spec.json_grammar));
        model_events.on_progress = [&](const StepStats& s, const JobProgress& p) {
          if (events.on_progress) events.on_progress("judge", s, p);
        };
        if (!run_model_step(judge_spec, job, host_, model_events, cancel, run)) {
          result.is_cancelled = true;
          result.steps.push_back(run);
          return result;
        }
      }
      const Judgements judgements = read_judgements(*JobStore::open(job), judge);
      {
        auto generated = JobStore::open(generate_job);
        apply_judgements(*generated, judgements);
      }
      run.rows_in = static_cast<int64_t>(judgements.extras.size());
      run.rows_out = static_cast<int64_t>(judgements.scores.size());
      run.note =
          str_cat(judgements.num_asked, " judgements, ", judgements.num_failed, " unreadable");
      context.judge_scores = judgements.scores;
      context.position_agreement = judgements.position_agreement;
      context.judge_failures = judgements.num_failed;
      if (!run.was_cached) run.seconds = seconds_since(start);
      upstream_key = key;
      finish_step(run);
      continue;
    }
    if (step.kind == StepKind::Filter || step.kind == StepKind::Dedup) {
      Json parts = {{"step", step.name}, {"options", step.source}, {"upstream", upstream_key}};
      if (step.kind == StepKind::Dedup && !step.dedup.decontaminate.empty())
        parts["evaluation"] = digest(step.dedup.decontaminate);
      const std::string key = step_key(parts);
      StepRun run{.name = step.name, .key = key};
      const auto generated = JobStore::open(generate_job);
      if (step.kind == StepKind::Filter) {
        run_filter_step(step.filter, *generated, steps_path("filter", key, ".json"), removals, run);
      } else {
        run_dedup_step(step.dedup, *generated, steps_path("dedup", key, ".json"), removals,
                       context.clusters, run);
      }
      run.seconds = seconds_since(start);
      upstream_key = key;
      finish_step(run);
      continue;
    }
    // export
    StepRun run{.name = "export", .key = upstream_key};
    const auto generated = JobStore::open(generate_job);
    const DatasetRecords records =
        build_dataset_records(*generated, description_, removals, generated->pair_picks());
    context.steps = &result.steps;
    context.removals = &removals;
    context.generated = generated.get();
    run.rows_in = generated->counts().done;
    run.rows_out = static_cast<int64_t>(records.rows.size());
    result.export_dir = (fs::path(dir_) / step.export_step.dir).string();
    run.seconds = seconds_since(start);
    std::vector<StepRun> with_export = result.steps;
    with_export.push_back(run);
    context.steps = &with_export;
    write_pipeline_export(context, step.export_step, records);
    result.report_path = (fs::path(dir_) / "report.html").string();
    result.rows_exported = run.rows_out;
    result.pairs_by_judge = records.pairs_by_judge;
    result.pairs_by_review = records.pairs_by_review;
    finish_step(run);
  }
  result.judge_failures = context.judge_failures;
  write_run_summary(result, (fs::path(dir_) / "run.json").string());
  return result;
}

}  // namespace sluice
