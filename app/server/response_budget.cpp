#include "app/server/response_budget.h"

#include <algorithm>

#include "app/server/api_error.h"
#include "engine/core/error.h"

namespace sluice {

namespace {

// The most tokens one choice of a prompt this long may generate.
uint64_t max_new_tokens(const SamplingParams& sampling, size_t prompt_length, int max_model_len) {
  const int64_t left = static_cast<int64_t>(max_model_len) - static_cast<int64_t>(prompt_length);
  return static_cast<uint64_t>(std::clamp<int64_t>(left, 0, sampling.max_tokens));
}

// A reasoning token's text is written twice (reasoning_content and reasoning): one entry more.
uint64_t reasoning_entries(const SamplingParams& sampling) {
  return sampling.reasoning.format != ReasoningFormat::None ? 1 : 0;
}

uint64_t entries_per_token(const SamplingParams& sampling) {
  const uint64_t token = sampling.logprobs >= 0 ? 1 + static_cast<uint64_t>(sampling.logprobs) : 1;
  return token + reasoning_entries(sampling);
}

}  // namespace

uint64_t count_response_entries(const SamplingParams& sampling,
                                std::span<const size_t> prompt_lengths, int max_model_len) {
  uint64_t num_tokens = 0;
  for (const size_t length : prompt_lengths)
    num_tokens += max_new_tokens(sampling, length, max_model_len);
  return static_cast<uint64_t>(std::max(sampling.n, 1)) * num_tokens * entries_per_token(sampling);
}

void check_response_entries(const CompletionRequest& request,
                            std::span<const size_t> prompt_lengths, int max_model_len,
                            uint64_t max_entries) {
  const SamplingParams& s = request.sampling;
  const uint64_t num_entries = count_response_entries(s, prompt_lengths, max_model_len);
  if (num_entries <= max_entries) return;
  uint64_t most_tokens = 0;
  for (const size_t length : prompt_lengths)
    most_tokens = std::max(most_tokens, max_new_tokens(s, length, max_model_len));
  const bool is_chat = request.kind == CompletionKind::Chat;
  const char* logprobs_name = is_chat ? "top_logprobs" : "logprobs";
  const int num_top = std::max(s.logprobs, 0);
  // The error names the parameter that multiplies the most.
  const char* param = s.n > 1 ? "n" : num_top > 0 ? logprobs_name : "max_tokens";
  throw bad_request(
      param,
      str_cat("the answer could hold ", num_entries, " tokens and top log-probabilities: n (", s.n,
              ") x ", prompt_lengths.size(), " prompt(s) x up to ", most_tokens,
              " tokens (max_tokens ", s.max_tokens, ", or what the context leaves) x (1 + ",
              logprobs_name, " ", num_top, reasoning_entries(s) ? ", + 1 for the reasoning" : "",
              "); this server answers at most ", max_entries,
              " per request (--max-response-entries): ask for fewer choices, tokens or ",
              logprobs_name));
}

}  // namespace sluice
