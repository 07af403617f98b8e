#include "engine/runner/sampler.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/philox.h"
#include "engine/sched/token_logprobs.h"

namespace sluice {
namespace {

constexpr float kFloatMax = std::numeric_limits<float>::max();
constexpr float kInfinity = std::numeric_limits<float>::infinity();

// vLLM's and OpenAI's range for the additive penalties.
constexpr float kMaxAdditivePenalty = 2.0f;

// Throws when the model's logits hold NaN or +inf: both mean the forward pass overflowed, and
// any token chosen from them would be noise. -inf is a legitimate "impossible token".
void check_logits(std::span<const float> logits) {
  // A branch-free scan first; the culprit is looked up only on failure.
  int num_bad = 0;
  for (const float logit : logits) num_bad += !(logit < kInfinity);  // NaN or +inf
  if (num_bad == 0) return;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (std::isnan(logits[i])) fail("the model produced NaN logits (token id ", i, ")");
    if (logits[i] == kInfinity) {
      fail("the model produced an infinite logit (+inf, token id ", i, ")");
    }
  }
}

// Throws unless every id is in [0, vocab_size).
void check_token_ids(std::span<const int32_t> token_ids, size_t vocab_size, const char* what) {
  for (const int32_t id : token_ids) {
    if (id < 0 || static_cast<size_t>(id) >= vocab_size) {
      fail("sampler: ", what, " token id ", id, " is outside the vocabulary of ", vocab_size);
    }
  }
}

// Keeps a penalised finite logit finite: a huge logit divided by a small penalty must stay
// the most likely token, not become +inf (which the softmax cannot handle).
float clamp_finite(float penalised, float original) {
  if (!std::isfinite(original)) return penalised;
  return std::clamp(penalised, -kFloatMax, kFloatMax);
}

// Returns the id of the largest logit, the lowest id among equals; throws if all are -inf.
int32_t greedy_token(std::span<const float> logits) {
  int32_t best_id = -1;
  float best_logit = -kInfinity;
  for (size_t i = 0; i < logits.size(); ++i) {
    // Strictly greater: a later equal logit never displaces a lower id.
    if (logits[i] > best_logit) {
      best_logit = logits[i];
      best_id = static_cast<int32_t>(i);
    }
  }
  if (best_id < 0) fail("sampler: every logit is -inf; no token can be sampled");
  return best_id;
}

double total_weight(std::span<const SamplingCandidate> candidates) {
  double total = 0.0;
  for (const SamplingCandidate& candidate : candidates) total += candidate.weight;
  return total;
}

// Fills candidates, in ascending id order, with every token whose logit is finite (-inf tokens
// are impossible). Every later step keeps that id order.
void collect_candidates(std::span<const float> logits, std::vector<SamplingCandidate>& candidates) {
  candidates.clear();
  candidates.reserve(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] == -kInfinity) continue;
    candidates.push_back(SamplingCandidate{0.0, logits[i], static_cast<int32_t>(i)});
  }
}

// Sets each weight to exp((logit - max_logit) / temperature) and drops weights that
// underflowed to 0 (relative probability below about 1e-45), so that no draw can land on one when
// rounding pushes the target to the end. Precondition: candidates not empty.
void weigh_candidates(float temperature, std::vector<SamplingCandidate>& candidates) {
  float max_logit = -kInfinity;
  for (const SamplingCandidate& candidate : candidates) {
    max_logit = std::max(max_logit, candidate.logit);
  }
  // Subtracting the max in double keeps the softmax stable and a tiny temperature from
  // overflowing; the best token gets exactly exp(0) = 1. The exp itself runs in float: it is
  // exact to ~1e-7 relative, finer than the 24-bit uniform resolves, and a third cheaper.
  // Below -104 expf is 0 anyway; the clamp keeps the conversion to float defined.
  const double inverse_temperature = 1.0 / static_cast<double>(temperature);
  bool has_underflow = false;
  for (SamplingCandidate& candidate : candidates) {
    const double scaled = (static_cast<double>(candidate.logit) - max_logit) * inverse_temperature;
    candidate.weight = std::exp(static_cast<float>(std::max(scaled, -128.0)));
    has_underflow |= candidate.weight == 0.0;
  }
  if (has_underflow) {
    std::erase_if(candidates, [](const SamplingCandidate& c) { return c.weight == 0.0; });
  }
}

// Drops candidates less likely than min_p times the best one. The best has weight exp(0) = 1,
// so the test is on the weight directly.
void keep_min_p(float min_p, std::vector<SamplingCandidate>& candidates) {
  const double min_weight = min_p;
  std::erase_if(candidates, [&](const SamplingCandidate& c) { return c.weight < min_weight; });
}

// ---- walking the sampling order -------------------------------------------------------------
// The sampling order is logit descending, then token id ascending. Top-k, top-p and the draw
// all ask the same question: walking the candidates in that order and summing a mass (1 per
// token for top-k, the weight otherwise), where does the sum first exceed a target (or reach
// it)? A sort answers in O(n log n) and nth_element halving costs ~2 ms on a 128k vocabulary;
// instead a radix selection on the logit's bits keeps only the crossing bucket per pass (11,
// 11, then 10 bits), so an answer costs two linear passes over the candidates plus work on the
// few that share the crossing bucket.

// Where a walk stopped: enough to cut the candidates there.
struct Crossing {
  uint32_t key;
  int32_t token_id;
};

enum class Mass { kCount, kWeight };

constexpr int kNumRadixLevels = 3;
constexpr int kRadixShifts[kNumRadixLevels] = {21, 10, 0};
constexpr uint32_t kRadixMasks[kNumRadixLevels] = {0x7ff, 0x7ff, 0x3ff};
constexpr size_t kNumRadixBuckets = 2048;
// Below this many candidates, sorting them beats another histogram pass.
constexpr size_t kMaxSortedCandidates = 64;

// Maps a logit to a key whose ascending order is the descending order of logits. -0 and +0
// share a key because they compare equal. Precondition: logit is not NaN.
uint32_t order_key(float logit) {
  const auto bits = std::bit_cast<uint32_t>(logit == 0.0f ? 0.0f : logit);
  // IEEE sign-magnitude to an unsigned order of ascending floats, then inverted.
  const uint32_t ascending = (bits & 0x80000000u) != 0 ? ~bits : (bits | 0x80000000u);
  return ~ascending;
}

// Returns true when a comes before b in the sampling order: ties in logit go to the lower id.
bool comes_before(const SamplingCandidate& a, const SamplingCandidate& b) {
  if (a.logit != b.logit) return a.logit > b.logit;
  return a.token_id < b.token_id;
}

double mass_of(const SamplingCandidate& candidate, Mass mass) {
  return mass == Mass::kCount ? 1.0 : candidate.weight;
}

bool crosses(double cumulative, double target, bool is_inclusive) {
  return is_inclusive ? cumulative >= target : cumulative > target;
}

// Scans bucket masses in order; returns the bucket where the running sum crosses target (or
// the last non-empty one when rounding lets none cross) and adds the buckets before it to
// mass_before. Precondition: some bucket is non-empty.
size_t find_crossing_bucket(std::span<const double> bucket_masses, double target, bool is_inclusive,
                            double& mass_before) {
  size_t chosen = 0;
  double mass_before_chosen = mass_before;
  double running = mass_before;
  for (size_t bucket = 0; bucket < bucket_masses.size(); ++bucket) {
    if (bucket_masses[bucket] == 0.0) continue;
    chosen = bucket;
    mass_before_chosen = running;
    running += bucket_masses[bucket];
    if (crosses(running, target, is_inclusive)) break;
  }
  mass_before = mass_before_chosen;
  return chosen;
}

// Walks candidates sorted in sampling order, starting from mass_before; returns where the sum
// crosses target (the last candidate when rounding lets none cross). Precondition: not empty.
Crossing walk_to_crossing(std::span<const SamplingCandidate> candidates, double target,
                          bool is_inclusive, Mass mass, double mass_before) {
  for (const SamplingCandidate& candidate : candidates) {
    mass_before += mass_of(candidate, mass);
    if (crosses(mass_before, target, is_inclusive)) {
      return Crossing{order_key(candidate.logit), candidate.token_id};
    }
  }
  return Crossing{order_key(candidates.back().logit), candidates.back().token_id};
}

// Returns the first candidate, in sampling order, at which the cumulative mass exceeds target
// (reaches it when is_inclusive); the last one if rounding lets none cross. scratch is reused
// storage. Precondition: candidates non-empty, in ascending id order, every mass > 0.
Crossing find_crossing(std::span<const SamplingCandidate> candidates, double target,
                       bool is_inclusive, Mass mass, std::vector<SamplingCandidate>& scratch) {
  assert(!candidates.empty());
  double mass_before = 0.0;
  std::span<const SamplingCandidate> range = candidates;
  int level = 0;
  for (; level < kNumRadixLevels && range.size() > kMaxSortedCandidates; ++level) {
    const int shift = kRadixShifts[level];
    const uint32_t mask = kRadixMasks[level];
    double bucket_masses[kNumRadixBuckets] = {};
    for (const SamplingCandidate& c : range) {
      bucket_masses[(order_key(c.logit) >> shift) & mask] += mass_of(c, mass);
    }
    const size_t bucket = find_crossing_bucket(bucket_masses, target, is_inclusive, mass_before);
    // Keep the bucket's members in id order. Compacting scratch into itself is safe: the write
    // index never passes the read index.
    if (range.data() != scratch.data()) scratch.resize(range.size());
    size_t num_kept = 0;
    for (const SamplingCandidate& c : range) {
      if (((order_key(c.logit) >> shift) & mask) == bucket) scratch[num_kept++] = c;
    }
    range = std::span<const SamplingCandidate>(scratch.data(), num_kept);
  }
  // After every level the survivors share one logit and are in id order: already sorted.
  if (level == kNumRadixLevels) {
    return walk_to_crossing(range, target, is_inclusive, mass, mass_before);
  }
  if (range.data() != scratch.data()) scratch.assign(range.begin(), range.end());
  const std::span<SamplingCandidate> sorted(scratch.data(), range.size());
  std::sort(sorted.begin(), sorted.end(), comes_before);
  return walk_to_crossing(sorted, target, is_inclusive, mass, mass_before);
}

// Keeps the candidates up to and including crossing in sampling order, still in id order.
void keep_through(Crossing crossing, std::vector<SamplingCandidate>& candidates) {
  std::erase_if(candidates, [&](const SamplingCandidate& c) {
    const uint32_t key = order_key(c.logit);
    return key > crossing.key || (key == crossing.key && c.token_id > crossing.token_id);
  });
}

}  // namespace

void validate_sampling_params(const SamplingParams& params) {
  // Comparisons are written so that NaN fails them.
  if (params.n < 1) fail("sampling params: n must be at least 1, got ", params.n);
  if (!(params.temperature >= 0.0f && params.temperature < kInfinity)) {
    fail("sampling params: temperature must be finite and >= 0, got ", params.temperature);
  }
  if (!(params.top_p > 0.0f && params.top_p <= 1.0f)) {
    fail("sampling params: top_p must be in (0, 1], got ", params.top_p);
  }
  if (!(params.min_p >= 0.0f && params.min_p <= 1.0f)) {
    fail("sampling params: min_p must be in [0, 1], got ", params.min_p);
  }
  if (!(params.repetition_penalty > 0.0f && params.repetition_penalty < kInfinity)) {
    fail("sampling params: repetition_penalty must be finite and > 0, got ",
         params.repetition_penalty);
  }
  if (!(std::fabs(params.presence_penalty) <= kMaxAdditivePenalty)) {
    fail("sampling params: presence_penalty must be in [-2, 2], got ", params.presence_penalty);
  }
  if (!(std::fabs(params.frequency_penalty) <= kMaxAdditivePenalty)) {
    fail("sampling params: frequency_penalty must be in [-2, 2], got ", params.frequency_penalty);
  }
  if (params.max_tokens < 1) {
    fail("sampling params: max_tokens must be at least 1, got ", params.max_tokens);
  }
  for (size_t i = 0; i < params.stop.size(); ++i) {
    if (params.stop[i].empty()) fail("sampling params: stop string ", i, " is empty");
  }
  if (params.reasoning.budget < -1) {
    fail("sampling params: the reasoning budget must be 0 or more tokens (or -1, none), got ",
         params.reasoning.budget);
  }
  for (const int32_t id : params.stop_token_ids) {
    if (id < 0) fail("sampling params: stop_token_ids holds a negative id ", id);
  }
  if (params.logprobs < -1 || params.logprobs > kMaxTopLogprobs) {
    fail("sampling params: logprobs must be -1 (none) or 0 to ", kMaxTopLogprobs, ", got ",
         params.logprobs);
  }
}

int32_t Sampler::sample(std::span<float> logits, const SamplingParams& params,
                        const SamplingContext& context) {
  assert(!logits.empty());
  check_logits(logits);
  apply_penalties(logits, params, context);
  if (params.temperature == 0.0f) return greedy_token(logits);

  collect_candidates(logits, candidates_);
  if (candidates_.empty()) fail("sampler: every logit is -inf; no token can be sampled");
  if (params.top_k > 0 && static_cast<size_t>(params.top_k) < candidates_.size()) {
    const auto top_k = static_cast<double>(params.top_k);
    keep_through(find_crossing(candidates_, top_k, /*is_inclusive=*/true, Mass::kCount, scratch_),
                 candidates_);
  }
  weigh_candidates(params.temperature, candidates_);
  // Top-p 1 keeps everything by definition; skipping it also avoids rounding at the edge.
  if (params.top_p < 1.0f) {
    const double target = static_cast<double>(params.top_p) * total_weight(candidates_);
    keep_through(find_crossing(candidates_, target, /*is_inclusive=*/true, Mass::kWeight, scratch_),
                 candidates_);
  }
  if (params.min_p > 0.0f) keep_min_p(params.min_p, candidates_);
  assert(!candidates_.empty());  // the best token has weight 1 and survives every filter

  const size_t position = context.prompt_token_ids.size() + context.output_token_ids.size();
  assert(position <= UINT32_MAX);  // positions are bounded by the context length
  const float uniform = sampling_uniform(params.seed, context.request_key, context.sample_idx,
                                         static_cast<uint32_t>(position));
  const double target = static_cast<double>(uniform) * total_weight(candidates_);
  return find_crossing(candidates_, target, /*is_inclusive=*/false, Mass::kWeight, scratch_)
      .token_id;
}

void Sampler::apply_penalties(std::span<float> logits, const SamplingParams& params,
                              const SamplingContext& context) {
  const bool has_repetition = params.repetition_penalty != 1.0f;
  const bool has_output = params.frequency_penalty != 0.0f || params.presence_penalty != 0.0f;
  if (!has_repetition && !has_output) return;
  // Check every id before touching scratch, so a throw leaves the scratch all zero.
  check_token_ids(context.prompt_token_ids, logits.size(), "prompt");
  check_token_ids(context.output_token_ids, logits.size(), "output");
  reserve_vocab(logits.size());
  if (has_repetition) apply_repetition_penalty(logits, params.repetition_penalty, context);
  if (has_output) apply_output_penalties(logits, params, context.output_token_ids);
}

void Sampler::reserve_vocab(size_t vocab_size) {
  if (output_counts_.size() < vocab_size) {
    output_counts_.resize(vocab_size, 0);
    is_penalised_.resize(vocab_size, 0);
  }
}

void Sampler::apply_repetition_penalty(std::span<float> logits, float penalty,
                                       const SamplingContext& context) {
  touched_ids_.clear();
  for (const auto ids : {context.prompt_token_ids, context.output_token_ids}) {
    for (const int32_t id : ids) {
      // Each distinct id is penalised once, however often it occurs.
      if (is_penalised_[id]) continue;
      is_penalised_[id] = 1;
      touched_ids_.push_back(id);
      const float logit = logits[id];
      const float penalised = logit > 0.0f ? logit / penalty : logit * penalty;
      logits[id] = clamp_finite(penalised, logit);
    }
  }
  for (const int32_t id : touched_ids_) is_penalised_[id] = 0;
}

void Sampler::apply_output_penalties(std::span<float> logits, const SamplingParams& params,
                                     std::span<const int32_t> output_token_ids) {
  touched_ids_.clear();
  for (const int32_t id : output_token_ids) {
    if (output_counts_[id]++ == 0) touched_ids_.push_back(id);
  }
  for (const int32_t id : touched_ids_) {
    const float logit = logits[id];
    // Two subtractions in float, in vLLM's order, so hand-computed values match exactly.
    float penalised = logit - params.frequency_penalty * static_cast<float>(output_counts_[id]);
    penalised -= params.presence_penalty;
    logits[id] = clamp_finite(penalised, logit);
    output_counts_[id] = 0;
  }
}

}  // namespace sluice
