#include "engine/export/export_hub.h"

#include <filesystem>

#include "engine/core/build_info.h"
#include "engine/export/export_rows.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

std::string file_name_of(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// The instruction a row answered: its last user turn (the rendered prompt when it has none).
std::string prompt_of(const RowResult& row) {
  for (auto it = row.messages.rbegin(); it != row.messages.rend(); ++it)
    if (it->role == "user") return it->content;
  return row.prompt;
}

// Returns params with every "*_path" string cut to its file name (at any depth): a job keeps the
// model's, tokenizer's and input's full paths, which a published card must not show.
Json without_folders(const Json& params) {
  if (!params.is_object()) return params;
  Json out = Json::object();
  for (const auto& [key, value] : params.items()) {
    const bool is_path = key.size() > 5 && key.ends_with("_path") && value.is_string();
    out[key] = is_path ? Json(file_name_of(value.get<std::string>())) : without_folders(value);
  }
  return out;
}

Json hub_provenance(const JobInfo& info, const std::string& job_path, const ExportStats& stats) {
  Json left_out = Json::object();
  for (const auto& [reason, count] : stats.left_out) left_out[reason] = count;
  return {{"model", {{"file", file_name_of(info.model_path)}, {"identity", info.model_identity}}},
          {"source",
           {{"file", file_name_of(info.source_path)},
            {"format", info.source_format},
            {"sha256", info.source_sha256}}},
          {"job", {{"file", file_name_of(job_path)}, {"created_at", info.created_at}}},
          {"parameters", without_folders(info.params)},
          {"sluice_version", build_info::kVersion},
          {"rows", {{"written", stats.rows_written}, {"records", stats.records_written}}},
          {"left_out", std::move(left_out)}};
}

}  // namespace

std::vector<ParquetColumn> hub_export_columns() {
  return {{"row_index", ParquetType::Int64, false}, {"sample_index", ParquetType::Int64, false},
          {"prompt", ParquetType::String},          {"messages", ParquetType::Messages},
          {"reasoning", ParquetType::String},       {"finish_reason", ParquetType::String},
          {"output_tokens", ParquetType::Int64},    {"model", ParquetType::String}};
}

HubExportStats export_job_hub(const JobStore& job, const std::string& dir,
                              const ExportOptions& options, bool overwrite) {
  HubFolderOptions folder_options;
  folder_options.overwrite = overwrite;
  HubFolderWriter writer(dir, hub_export_columns(), folder_options);
  const std::string model = file_name_of(job.info().model_path);
  HubExportStats stats;
  // One snapshot: a job still running must not add rows while they are written.
  job.with_snapshot([&] {
    for_each_readable_row(job, stats.rows, [&](const RowResult& row) {
      if (const char* why = why_row_left_out(row, options, /*honours_include_failed=*/false)) {
        stats.rows.leave_out(why);
        return;
      }
      if (row.samples.empty()) {
        stats.rows.leave_out("without samples");
        return;
      }
      Json conversation = Json::array();
      for (const ChatMessage& message : conversation_of(row))
        conversation.push_back({{"content", message.content}, {"role", message.role}});
      RowResult storage;
      const RowResult& shown = row_for_export(row, options.reasoning, storage);
      for (size_t i = 0; i < shown.samples.size(); ++i) {
        const SampleResult& sample = shown.samples[i];
        Json messages = conversation;
        messages.push_back({{"content", sample.output}, {"role", "assistant"}});
        writer.add_row({{"row_index", row.row_index},
                        {"sample_index", i},
                        {"prompt", prompt_of(row)},
                        {"messages", std::move(messages)},
                        {"reasoning", has_reasoning(sample) ? Json(sample.reasoning) : Json()},
                        {"finish_reason", sample.finish_reason},
                        {"output_tokens", sample.output_tokens},
                        {"model", model}});
        stats.rows.records_written++;
      }
      stats.rows.rows_written++;
    });
  });
  DatasetCard card;
  card.pretty_name = std::filesystem::path(job.path()).stem().string();
  card.task_categories = {"text-generation"};
  card.description = "Generated with Sluice from the instruction file " +
                     file_name_of(job.info().source_path) + ": one record per sample.";
  card.column_descriptions = {{"row_index", "the row of the instruction file (0-based)"},
                              {"sample_index", "which of the row's samples"},
                              {"prompt", "the instruction: the conversation's last user turn"},
                              {"messages", "the conversation, then the model's answer"},
                              {"reasoning", "a thinking model's reasoning, when kept apart"},
                              {"finish_reason", "stop, or length when cut at max_tokens"},
                              {"output_tokens", "tokens generated, reasoning included"},
                              {"model", "the model file"}};
  card.provenance = hub_provenance(job.info(), job.path(), stats.rows);
  stats.folder = writer.finish(std::move(card));
  return stats;
}

}  // namespace sluice
