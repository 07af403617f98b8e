// What a job keeps for one row: the input, the prompt it became, every sample generated, and
// how it ended. The job store persists it; the exporters read it back.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/chat_message.h"

namespace sluice {

enum class RowStatus : uint8_t {
  Pending,  // not finished (never stored as a result; counts only)
  Done,     // every sample finished (stop or length)
  Failed,   // the row could not run (prompt too long, ...) or a sample ended with an error
  Skipped,  // a bad input row skipped under --on-bad-row skip
};

// Returns "pending", "done", "failed" or "skipped".
const char* to_string(RowStatus status);
// Parses the names above; throws Error for anything else.
RowStatus parse_row_status(const std::string& name);

struct SampleResult {
  std::string output;         // the answer (a thinking model's reasoning is kept apart, below)
  int output_tokens = 0;      // every generated token, reasoning included
  std::string reasoning;      // a thinking model's reasoning; "" for none
  int reasoning_tokens = 0;   // of output_tokens, those inside the reasoning
  std::string finish_reason;  // "stop", "length", "abort" or "error"
  std::vector<int32_t> output_token_ids;  // kept when the job asks for token ids
  // Whether the output is valid for the job's structured output (or the row's schema), judged
  // when the row finished (engine/grammar/output_check.h); unset for free text and for rows
  // stored before validity was kept.
  std::optional<bool> valid;
  std::string invalid_reason;                                       // why not, when valid is false
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();  // e.g. scores added later

  bool operator==(const SampleResult&) const = default;
};

struct RowResult {
  int64_t row_index = 0;
  size_t line = 0;
  RowStatus status = RowStatus::Done;
  std::string error;                                                // why, when Failed or Skipped
  nlohmann::ordered_json input = nlohmann::ordered_json::object();  // the source row's fields
  Conversation messages;  // the conversation the prompt was built from
  std::string prompt;     // the exact rendered prompt text
  int prompt_tokens = 0;
  std::vector<SampleResult> samples;  // n samples, by sample index
  uint64_t seed = 0;
  double queue_ms = 0.0;
  double ttft_ms = 0.0;
  double total_ms = 0.0;

  bool operator==(const RowResult&) const = default;
};

// A row's validity as the results table sorts and filters it and an export leaves rows out by
// it: the verdict over all its samples (SampleResult::valid, stored when the row finished).
enum class RowValidity : uint8_t {
  Invalid,  // some sample was judged not valid
  Valid,    // the row has samples and every one was judged valid
  Unknown,  // no verdict: free text, a failed or skipped row, or stored before validity was kept
};

// Returns row's validity by the rule above (a sample without a verdict, and none judged invalid,
// makes the row Unknown). JobTable's SQL applies the same rule to the stored samples.
RowValidity row_validity(const RowResult& row);

}  // namespace sluice
