#include "engine/export/export_jsonl.h"

#include <algorithm>

#include "engine/export/export_output.h"
#include "engine/export/export_rows.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/row_codec.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

// The flat shape is for jobs with n = 1: the job's params say so, and (in case they do not say)
// no stored row has more than one sample, which the flat shape could not hold.
bool is_flat_job(const JobStore& job) {
  const Json& params = job.info().params;
  const auto n = params.find("n");
  if (n != params.end() && !(n->is_number_integer() && n->get<int64_t>() == 1)) return false;
  size_t max_num_samples = 0;
  for_each_readable_row(job, [&](const RowResult& row) {
    max_num_samples = std::max(max_num_samples, row.samples.size());
  });
  return max_num_samples <= 1;
}

// A sample's fields in the record: reasoning and reasoning_tokens (only for a sample that has
// reasoning, so that other samples read as they did before) beside output and output_tokens;
// valid and invalid_reason when the job kept them.
Json jsonl_sample(const SampleResult& sample) {
  Json json = Json::object();
  json["output"] = sample.output;
  if (has_reasoning(sample)) json["reasoning"] = sample.reasoning;
  json["output_tokens"] = sample.output_tokens;
  if (has_reasoning(sample)) json["reasoning_tokens"] = sample.reasoning_tokens;
  json["finish_reason"] = sample.finish_reason;
  // Validity as judged when the row finished (only for jobs that kept it).
  if (sample.valid) json["valid"] = *sample.valid;
  if (!sample.invalid_reason.empty()) json["invalid_reason"] = sample.invalid_reason;
  json["output_token_ids"] = sample.output_token_ids;
  json["extra"] = sample.extra;
  return json;
}

}  // namespace

Json jsonl_record(const RowResult& row, bool is_flat) {
  Json record = Json::object();
  record["row_index"] = row.row_index;
  record["line"] = row.line;
  record["status"] = to_string(row.status);
  record["input"] = row.input;
  record["messages"] = messages_to_json(row.messages);
  record["prompt"] = row.prompt;
  record["prompt_tokens"] = row.prompt_tokens;
  if (is_flat) {
    if (row.samples.empty()) {
      for (const char* key :
           {"output", "output_tokens", "finish_reason", "output_token_ids", "extra"})
        record[key] = nullptr;
    } else {
      const Json sample = jsonl_sample(row.samples[0]);
      for (const auto& [key, value] : sample.items()) record[key] = value;
    }
  } else {
    Json samples = Json::array();
    for (const SampleResult& sample : row.samples) samples.push_back(jsonl_sample(sample));
    record["samples"] = std::move(samples);
  }
  record["seed"] = row.seed;
  record["queue_ms"] = row.queue_ms;
  record["ttft_ms"] = row.ttft_ms;
  record["total_ms"] = row.total_ms;
  record["error"] = row.error;
  return record;
}

ExportStats write_jsonl_export(const JobStore& job, ExportOutput& out,
                               const ExportOptions& options) {
  const bool is_flat = is_flat_job(job);
  ExportStats stats;
  for_each_readable_row(job, stats, [&](const RowResult& row) {
    if (const char* why = why_row_left_out(row, options, /*honours_include_failed=*/true)) {
      stats.leave_out(why);
      return;
    }
    RowResult storage;
    out.write(to_json_text(jsonl_record(row_for_export(row, options.reasoning, storage), is_flat)));
    out.write("\n");
    stats.rows_written++;
    stats.records_written++;
  });
  return stats;
}

}  // namespace sluice
