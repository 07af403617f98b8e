// How large an answer may grow. An answer grows with its choices, their tokens and each token's
// top log-probabilities — the engine keeps them until a choice ends, the server until the answer
// is sent — so its size is counted in entries, a token or one of its top alternatives: at most
// n × prompts × max_tokens (or what the context leaves) × (1 + top log-probabilities), and one
// more per token for a chat answer with a reasoning format (a reasoning token's text is written
// twice, as reasoning_content and reasoning). One request
// may ask for at most --max-response-entries (a 400 naming the parameters and the limit); the
// requests in flight together reserve at most --max-response-entries-in-flight (InFlightBudget).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "app/server/completion_request.h"

namespace sluice {

// The entries a request's answer may hold: for each prompt (of prompt_lengths tokens), n choices
// of at most min(max_tokens, max_model_len - prompt length) tokens, each with 1 + top entries
// when log-probabilities are asked for (sampling.logprobs >= 0), 1 otherwise, plus 1 with a
// reasoning format (sampling.reasoning).
uint64_t count_response_entries(const SamplingParams& sampling,
                                std::span<const size_t> prompt_lengths, int max_model_len);

// Throws ApiError 400 when num_entries passes max_entries, naming n, the prompts, max_tokens and
// the top log-probabilities the request asked for, and the limit.
void check_response_entries(const CompletionRequest& request,
                            std::span<const size_t> prompt_lengths, int max_model_len,
                            uint64_t max_entries);

}  // namespace sluice
