#include "app/pipeline/pipeline_export.h"

#include <filesystem>
#include <fstream>

#include "app/pipeline/judge_rubric.h"
#include "app/pipeline/whole_file.h"
#include "engine/core/build_info.h"
#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/core/mapped_file.h"
#include "engine/curate/diversity.h"
#include "engine/export/hub_folder.h"
#include "engine/jobs/job_store.h"

namespace sluice {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

ParquetType parquet_type(RecordType type) {
  switch (type) {
    case RecordType::String:
      return ParquetType::String;
    case RecordType::Int64:
      return ParquetType::Int64;
    case RecordType::Double:
      return ParquetType::Double;
    case RecordType::Messages:
      return ParquetType::Messages;
  }
  return ParquetType::String;
}

Json read_facts(const std::string& job_path) {
  const std::string path = model_facts_path(job_path);
  Json facts;
  if (!fs::exists(path) || try_parse_json(read_text_file(path), facts) || !facts.is_object())
    return Json::object();
  return facts;
}

// The figures of a step that do not depend on whether it ran in this run.
Json step_provenance(const StepRun& run) {
  return {{"step", run.name},
          {"key", run.key.substr(0, 16)},
          {"rows_in", run.rows_in},
          {"rows_out", run.rows_out}};
}

const std::map<std::string, std::string> kColumnDescriptions = {
    {"prompt", "the instruction, as the input file gave it"},
    {"prompt_id", "SHA-256 of the prompt"},
    {"chosen", "the preferred conversation: the prompt's turns and the chosen answer"},
    {"rejected", "the same turns and the rejected answer"},
    {"score_chosen", "the judge's score of the chosen answer (mean of its ratings)"},
    {"score_rejected", "the judge's score of the rejected answer"},
    {"rationale_chosen", "the judge's first rationale for the chosen answer"},
    {"rationale_rejected", "the judge's first rationale for the rejected answer"},
    {"row", "the row of the input file (0-based)"},
    {"sample", "the sample of the row (0-based)"},
    {"source", "judge: paired by the judge's scores; review: by a person in Sluice's Pairs tab"},
    {"messages", "the conversation: the prompt's turns and the answer"},
    {"output_tokens", "tokens the model generated for the answer"}};

Json provenance_of(const ExportContext& c) {
  const PipelineDescription& d = *c.description;
  const GenerationSpec& spec = d.steps.front().generate;
  Json p = Json::object();
  Json model = read_facts(c.generate_job);
  if (!c.model_sha256.empty()) model["sha256"] = c.model_sha256;
  p["model"] = model;
  p["sampling"] = spec_to_json(spec)["sampling"];
  p["seed"] = spec.sampling.seed;
  if (const PipelineStep* judge = d.find(StepKind::Judge)) {
    Json judge_model = read_facts(c.judge_job);
    if (!c.judge_model_sha256.empty()) judge_model["sha256"] = c.judge_model_sha256;
    p["judge"] = {{"rubric", judge->source.value("rubric", "ultrafeedback")},
                  {"wording", kJudgeRubricVersion},
                  {"k", judge->judge.k},
                  {"model", judge_model},
                  {"sampling", spec_to_json(judge->judge.spec)["sampling"]}};
  }
  p["input_file"] = {{"name", fs::path(spec.input_path).filename().string()},
                     {"sha256", c.generated->info().source_sha256}};
  p["sluice_version"] = build_info::kVersion;
  Json steps = Json::array();
  for (const StepRun& run : *c.steps) steps.push_back(step_provenance(run));
  p["steps"] = steps;
  p["pipeline"] = d.text;
  return p;
}

std::vector<int> output_lengths(const JobStore& generated) {
  std::vector<int> lengths;
  generated.for_each_result([&](const RowResult& row) {
    for (const SampleResult& s : row.samples) lengths.push_back(s.output_tokens);
  });
  return lengths;
}

// The answers that went into the dataset: each record's chosen (or only) answer.
std::vector<std::string> kept_answers(const DatasetRecords& records) {
  std::vector<std::string> answers;
  for (const Json& row : records.rows) {
    const char* column = row.contains("chosen") ? "chosen" : "messages";
    const Json& messages = row.at(column);
    if (messages.is_array() && !messages.empty())
      answers.push_back(messages.back().value("content", ""));
  }
  return answers;
}

void write_removed(const ExportContext& c, const std::string& path) {
  std::string text;
  for (const auto& [row, removal] : c.removals->rows) {
    Json j = {{"row", row}, {"step", "dedup"}, {"reason", removal.reason}};
    if (removal.cluster >= 0) j["cluster"] = removal.cluster;
    text += j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  }
  for (const auto& [where, reason] : c.removals->samples) {
    text +=
        Json{{"row", where.first}, {"sample", where.second}, {"step", "filter"}, {"reason", reason}}
            .dump(-1, ' ', false, Json::error_handler_t::replace) +
        "\n";
  }
  write_whole_file(path, text);
}

}  // namespace

std::string write_pipeline_export(const ExportContext& c, const ExportStep& export_step,
                                  const DatasetRecords& records) {
  const PipelineDescription& d = *c.description;
  const std::string out_dir = (fs::path(c.dir) / export_step.dir).string();
  HubDataset dataset;
  for (const RecordColumn& column : records.columns)
    dataset.columns.push_back({column.name, parquet_type(column.type), true});
  dataset.rows = records.rows;
  dataset.options.overwrite = true;
  DatasetCard& card = dataset.card;
  card.pretty_name = export_step.pretty_name.empty() ? d.name : export_step.pretty_name;
  card.license = export_step.license;
  const bool is_dpo = d.find(StepKind::Judge) != nullptr;
  card.task_categories = {"text-generation"};
  if (is_dpo) card.tags.push_back("dpo");
  card.description =
      is_dpo ? "Preference pairs generated and judged on one workstation by Sluice: each row's "
               "samples were rated by an LLM judge and the best paired with the worst (or a "
               "person's pick in review), then filtered and deduplicated."
             : "Model answers generated by Sluice from an instruction file, then filtered and "
               "deduplicated.";
  for (const RecordColumn& column : records.columns) {
    if (const auto it = kColumnDescriptions.find(column.name); it != kColumnDescriptions.end())
      card.column_descriptions[column.name] = it->second;
  }
  card.provenance = provenance_of(c);
  write_hub_folder(out_dir, dataset);

  write_removed(c, (fs::path(c.dir) / "removed.jsonl").string());

  RunReport report;
  report.title = card.pretty_name;
  report.parameters = card.provenance;
  for (const StepRun& run : *c.steps) {
    report.steps.push_back({.name = run.name,
                            .kind = run.name,
                            .was_cached = run.was_cached,
                            .rows_in = run.rows_in,
                            .rows_out = run.rows_out,
                            .model_calls = run.model_calls,
                            .prompt_tokens = run.prompt_tokens,
                            .generated_tokens = run.generated_tokens,
                            .seconds = run.seconds});
  }
  report.output_tokens = output_lengths(*c.generated);
  report.chosen_tokens = records.chosen_tokens;
  report.rejected_tokens = records.rejected_tokens;
  report.judge_scores = c.judge_scores;
  report.position_agreement = c.position_agreement;
  for (const auto& [row, removal] : c.removals->rows) {
    const std::string reason = removal.reason.substr(0, removal.reason.find(" of row"));
    ++report.removed_by_reason[reason.substr(0, reason.find(':'))];
  }
  for (const auto& [where, reason] : c.removals->samples)
    ++report.removed_by_reason[reason.substr(0, reason.find(':'))];
  for (const auto& [reason, count] : records.rows_without_pair)
    report.removed_by_reason["no pair: " + reason] += count;
  report.clusters = c.clusters;
  const std::vector<std::string> answers = kept_answers(records);
  report.distinct_1 = distinct_n(answers, 1);
  report.distinct_2 = distinct_n(answers, 2);
  report.rows_exported = static_cast<int64_t>(records.rows.size());
  write_whole_file((fs::path(c.dir) / "report.html").string(), render_run_report_html(report));

  return out_dir;
}

}  // namespace sluice
