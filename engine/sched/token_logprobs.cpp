#include "engine/sched/token_logprobs.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace sluice {

TokenLogprobs token_logprobs(std::span<const float> logits, int32_t chosen, int num_top) {
  assert(chosen >= 0 && static_cast<size_t>(chosen) < logits.size());
  assert(num_top >= 0 && num_top <= kMaxTopLogprobs);
  float max_logit = -std::numeric_limits<float>::infinity();
  for (const float x : logits) max_logit = std::max(max_logit, x);
  // Summed in double: a 150k-token vocabulary of small terms loses nothing.
  double sum = 0.0;
  for (const float x : logits) sum += std::exp(static_cast<double>(x) - max_logit);
  const double log_norm = max_logit + std::log(sum);
  const auto logprob_of = [&](float logit) {
    return static_cast<float>(static_cast<double>(logit) - log_norm);
  };
  TokenLogprobs out;
  out.logprob = logprob_of(logits[static_cast<size_t>(chosen)]);
  const size_t k = std::min(static_cast<size_t>(num_top), logits.size());
  if (k == 0) return out;
  // The k likeliest by a bounded selection: one pass, k kept in order (k is at most 20).
  std::vector<int32_t> best;
  best.reserve(k + 1);
  const auto likelier = [&](int32_t a, int32_t b) {
    const float la = logits[static_cast<size_t>(a)], lb = logits[static_cast<size_t>(b)];
    return la > lb || (la == lb && a < b);
  };
  for (size_t id = 0; id < logits.size(); ++id) {
    const auto token = static_cast<int32_t>(id);
    if (best.size() == k && !likelier(token, best.back())) continue;
    best.insert(std::upper_bound(best.begin(), best.end(), token, likelier), token);
    if (best.size() > k) best.pop_back();
  }
  out.top.reserve(k);
  for (const int32_t token : best) {
    out.top.emplace_back(token, logprob_of(logits[static_cast<size_t>(token)]));
  }
  return out;
}

}  // namespace sluice
