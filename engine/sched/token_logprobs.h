// The log-probabilities a client asks for with each sampled token (OpenAI's logprobs): the
// chosen token's, and the likeliest tokens' at that position. They describe the model's own
// distribution — the log-softmax of the raw logits, before penalties, temperature, top-k/p and
// any grammar mask — as vLLM reports by default, so they do not depend on how a token was drawn.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace sluice {

// The most top log-probabilities a request may ask for per token (OpenAI's top_logprobs cap).
inline constexpr int kMaxTopLogprobs = 20;

struct TokenLogprobs {
  float logprob = 0.0f;  // of the chosen token
  // The num_top likeliest (token id, logprob), likeliest first; ties by lower id.
  std::vector<std::pair<int32_t, float>> top;

  bool operator==(const TokenLogprobs&) const = default;
};

// Returns the log-probabilities of chosen and of the num_top (0..kMaxTopLogprobs) likeliest
// tokens under log_softmax(logits). Tokens whose logit is -inf (never possible) get -inf.
// Preconditions: 0 <= chosen < logits.size(); logits holds a finite value.
TokenLogprobs token_logprobs(std::span<const float> logits, int32_t chosen, int num_top);

}  // namespace sluice
