#include "app/output_row.h"

namespace sluice {

nlohmann::ordered_json output_row_json(const RowResult& r) {
  nlohmann::ordered_json out;
  out["id"] = r.input.contains("id") ? r.input["id"] : nlohmann::ordered_json(r.row_index);
  out["prompt"] = r.prompt;
  out["prompt_tokens"] = r.prompt_tokens;
  auto sample_json = [](const SampleResult& s) {
    nlohmann::ordered_json j;
    // A thinking model's reasoning, before its answer (only when there was some).
    if (!s.reasoning.empty()) j["reasoning"] = s.reasoning;
    j["output"] = s.output;
    j["output_tokens"] = s.output_tokens;
    if (!s.reasoning.empty() || s.reasoning_tokens > 0) j["reasoning_tokens"] = s.reasoning_tokens;
    j["finish_reason"] = s.finish_reason;
    if (!s.output_token_ids.empty()) j["output_token_ids"] = s.output_token_ids;
    return j;
  };
  if (r.samples.size() == 1) {
    out.update(sample_json(r.samples.front()));
  } else if (r.samples.size() > 1) {
    out["samples"] = nlohmann::ordered_json::array();
    for (const auto& s : r.samples) out["samples"].push_back(sample_json(s));
  }
  if (r.status != RowStatus::Done) {
    out["status"] = to_string(r.status);
    if (r.samples.empty()) out["finish_reason"] = "error";
    out["error"] = r.error;
  }
  out["timings"] = {{"queue_ms", r.queue_ms}, {"ttft_ms", r.ttft_ms}, {"total_ms", r.total_ms}};
  return out;
}

std::string dump_jsonl_row(const nlohmann::ordered_json& row) {
  return row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace sluice
