#include "app/job_rows.h"

#include <algorithm>

namespace sluice {

namespace {

// The row's input and prompt, as every recorded row carries them.
RowResult row_with_prompt(const DatasetRow& row, const BuiltPrompt& prompt, uint64_t seed) {
  RowResult r;
  r.row_index = row.row_index;
  r.line = row.line;
  r.input = row.fields;
  r.messages = prompt.messages;
  r.prompt = prompt.text;
  r.seed = seed;
  return r;
}

}  // namespace

SampleResult sample_from(const FinishedRequest& f, bool with_token_ids) {
  SampleResult s;
  s.output = f.output_text;
  s.output_tokens =
      f.num_output_tokens >= 0 ? f.num_output_tokens : static_cast<int>(f.output_token_ids.size());
  s.finish_reason = to_string(f.finish_reason);
  s.reasoning = f.reasoning_text;
  s.reasoning_tokens = std::max(f.num_reasoning_tokens, 0);
  if (with_token_ids) s.output_token_ids = f.output_token_ids;
  return s;
}

RowResult finished_row(const DatasetRow& row, const BuiltPrompt& prompt,
                       const SamplingParams& sampling, const std::vector<FinishedRequest>& samples,
                       bool with_token_ids) {
  RowResult r = row_with_prompt(row, prompt, sampling.seed);
  r.prompt_tokens = samples.front().num_prompt_tokens;
  r.status = RowStatus::Done;
  for (const auto& s : samples) {
    r.samples.push_back(sample_from(s, with_token_ids));
    r.total_ms = std::max(r.total_ms, s.total_ms);
    if (s.finish_reason == FinishReason::Error && r.status != RowStatus::Failed) {
      r.status = RowStatus::Failed;
      r.error = s.error;
    }
  }
  r.queue_ms = samples.front().queue_ms;
  r.ttft_ms = samples.front().ttft_ms;
  return r;
}

RowResult unrun_row(const DatasetRow& row, const BuiltPrompt& prompt, const GenerationSpec& spec,
                    RowStatus status, std::string error) {
  RowResult r = row_with_prompt(row, prompt, spec.sampling.seed);
  r.status = status;
  r.error = std::move(error);
  return r;
}

RowResult refused_row(const DatasetRow& row, const BuiltPrompt& prompt, const GenerationSpec& spec,
                      std::string error) {
  RowResult r = unrun_row(row, prompt, spec, RowStatus::Failed, std::move(error));
  r.samples.assign(static_cast<size_t>(spec.sampling.n), SampleResult{.finish_reason = "error"});
  return r;
}

}  // namespace sluice
