#include "engine/runner/sampler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/philox.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Backing store for contexts whose only role is to set the position (prompt length).
const std::vector<int32_t>& zeros() {
  static const std::vector<int32_t> ids(1 << 16, 0);
  return ids;
}

// A context at `position` (prompt of that many zeros, no output).
SamplingContext context_at(uint32_t position, uint64_t request_key = 0, uint32_t sample_idx = 0) {
  SamplingContext context;
  context.prompt_token_ids = std::span<const int32_t>(zeros().data(), position);
  context.request_key = request_key;
  context.sample_idx = sample_idx;
  return context;
}

SamplingParams sampling(float temperature, int top_k = 0, float top_p = 1.0f, float min_p = 0.0f) {
  SamplingParams params;
  params.temperature = temperature;
  params.top_k = top_k;
  params.top_p = top_p;
  params.min_p = min_p;
  params.seed = 20240611;
  return params;
}

// Samples from a copy, since sample() penalises its logits in place.
int32_t draw(Sampler& sampler, std::vector<float> logits, const SamplingParams& params,
             const SamplingContext& context) {
  return sampler.sample(logits, params, context);
}

// Counts how often each token id is drawn at positions 0 .. num_draws - 1.
std::vector<int> histogram(const std::vector<float>& logits, const SamplingParams& params,
                           int num_draws) {
  Sampler sampler;
  std::vector<int> counts(logits.size(), 0);
  for (int position = 0; position < num_draws; ++position) {
    ++counts[draw(sampler, logits, params, context_at(static_cast<uint32_t>(position)))];
  }
  return counts;
}

// Pearson's statistic over the tokens with expected probability > 0; tokens with probability 0
// must never be drawn at all, which the callers check separately.
double chi_square(const std::vector<int>& counts, const std::vector<double>& probs, int num_draws) {
  double statistic = 0.0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (probs[i] == 0.0) continue;
    const double expected = probs[i] * num_draws;
    statistic += (counts[i] - expected) * (counts[i] - expected) / expected;
  }
  return statistic;
}

std::vector<float> log_of(const std::vector<double>& weights) {
  std::vector<float> logits;
  for (const double w : weights) logits.push_back(static_cast<float>(std::log(w)));
  return logits;
}

// ---- greedy -----------------------------------------------------------------------------------

TEST(Sampler, GreedyPicksTheArgmax) {
  Sampler sampler;
  EXPECT_EQ(draw(sampler, {0.1f, 3.0f, -1.0f, 2.9f}, SamplingParams{}, context_at(0)), 1);
  EXPECT_EQ(draw(sampler, {-5.0f, -4.0f, -6.0f}, SamplingParams{}, context_at(0)), 1);
}

TEST(Sampler, GreedyBreaksTiesTowardTheLowestId) {
  Sampler sampler;
  EXPECT_EQ(draw(sampler, {1.0f, 5.0f, 2.0f, 5.0f, 5.0f}, SamplingParams{}, context_at(0)), 1);
  EXPECT_EQ(draw(sampler, {0.0f, 0.0f, 0.0f}, SamplingParams{}, context_at(0)), 0);
}

TEST(Sampler, NegativeInfinityIsImpossible) {
  Sampler sampler;
  EXPECT_EQ(draw(sampler, {-kInf, -kInf, -50.0f}, SamplingParams{}, context_at(0)), 2);
  for (uint32_t position = 0; position < 200; ++position) {
    EXPECT_EQ(draw(sampler, {-kInf, 0.0f, -kInf}, sampling(1.0f), context_at(position)), 1);
  }
  EXPECT_THROW(draw(sampler, {-kInf, -kInf}, SamplingParams{}, context_at(0)), Error);
  EXPECT_THROW(draw(sampler, {-kInf, -kInf}, sampling(1.0f), context_at(0)), Error);
}

TEST(Sampler, NanOrPositiveInfinityLogitsThrow) {
  Sampler sampler;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const SamplingParams& params : {SamplingParams{}, sampling(1.0f)}) {
    EXPECT_THAT(
        [&] {
          draw(sampler, {0.0f, nan, 1.0f}, params, context_at(0));
        },
        ThrowsMessage<Error>(HasSubstr("NaN")));
    EXPECT_THAT(
        [&] {
          draw(sampler, {0.0f, kInf}, params, context_at(0));
        },
        ThrowsMessage<Error>(HasSubstr("+inf")));
  }
}

TEST(Sampler, TinyTemperatureActsLikeGreedy) {
  Sampler sampler;
  for (uint32_t position = 0; position < 100; ++position) {
    EXPECT_EQ(draw(sampler, {1.0f, 2.0f, 1.9999f}, sampling(1e-30f), context_at(position)), 1);
  }
}

// ---- penalties --------------------------------------------------------------------------------

TEST(Sampler, RepetitionPenaltyDividesPositiveAndMultipliesNegativeLogits) {
  Sampler sampler;
  std::vector<float> logits = {2.0f, -2.0f, 1.0f, 0.5f, 3.0f};
  const std::vector<int32_t> prompt = {0, 0};
  const std::vector<int32_t> output = {1};
  SamplingParams params;
  params.repetition_penalty = 2.0f;
  const SamplingContext context{prompt, output, 0, 0};
  // Greedy still sees the penalties: id 4 (3.0) wins, and the logits show what was applied.
  EXPECT_EQ(sampler.sample(logits, params, context), 4);
  // Prompt id 0 (twice, penalised once): 2 / 2; output id 1: -2 * 2; others untouched.
  EXPECT_EQ(logits, (std::vector<float>{1.0f, -4.0f, 1.0f, 0.5f, 3.0f}));

  std::vector<float> encouraged = {2.0f, -2.0f, 1.0f};
  params.repetition_penalty = 0.5f;
  sampler.apply_penalties(encouraged, params, context);
  EXPECT_EQ(encouraged, (std::vector<float>{4.0f, -1.0f, 1.0f}));
}

TEST(Sampler, FrequencyPenaltySubtractsPerOccurrenceInTheOutput) {
  Sampler sampler;
  const std::vector<int32_t> prompt = {0, 2};
  const std::vector<int32_t> output = {2, 2, 2, 4};
  SamplingParams params;
  params.frequency_penalty = 0.5f;
  // id 2: 1 - 0.5 * 3; id 4: 1 - 0.5 * 1; prompt-only id 0 untouched. The second round checks
  // that the counts of the first did not linger in the sampler's scratch.
  for (int round = 0; round < 2; ++round) {
    std::vector<float> logits(6, 1.0f);
    sampler.apply_penalties(logits, params, SamplingContext{prompt, output, 0, 0});
    EXPECT_EQ(logits, (std::vector<float>{1.0f, 1.0f, -0.5f, 1.0f, 0.5f, 1.0f})) << round;
  }
}

TEST(Sampler, PresencePenaltySubtractsOnceForTokensInTheOutput) {
  Sampler sampler;
  std::vector<float> logits(5, 1.0f);
  const std::vector<int32_t> prompt = {0};
  const std::vector<int32_t> output = {2, 2, 4};
  SamplingParams params;
  params.presence_penalty = 0.75f;
  sampler.apply_penalties(logits, params, SamplingContext{prompt, output, 0, 0});
  EXPECT_EQ(logits, (std::vector<float>{1.0f, 1.0f, 0.25f, 1.0f, 0.25f}));
}

TEST(Sampler, RepetitionPenaltyAppliesBeforeTheAdditiveOnes) {
  Sampler sampler;
  std::vector<float> logits = {0.0f, 3.0f};
  const std::vector<int32_t> output = {1, 1};
  SamplingParams params;
  params.repetition_penalty = 2.0f;
  params.frequency_penalty = 0.5f;
  params.presence_penalty = 0.25f;
  sampler.apply_penalties(logits, params, SamplingContext{{}, output, 0, 0});
  // 3 / 2 - 0.5 * 2 - 0.25. The other order would give (3 - 1 - 0.25) / 2 = 0.875.
  EXPECT_EQ(logits[1], 0.25f);
  EXPECT_EQ(logits[0], 0.0f);
}

TEST(Sampler, PenaltiesChangeTheGreedyChoice) {
  Sampler sampler;
  const std::vector<int32_t> output = {0};
  SamplingParams params;
  params.presence_penalty = 0.5f;
  EXPECT_EQ(draw(sampler, {2.0f, 1.9f}, SamplingParams{}, SamplingContext{{}, output, 0, 0}), 0);
  EXPECT_EQ(draw(sampler, {2.0f, 1.9f}, params, SamplingContext{{}, output, 0, 0}), 1);
}

TEST(Sampler, PenalisedHugeLogitsStayFinite) {
  Sampler sampler;
  std::vector<float> logits = {3e38f, 1.0f};
  const std::vector<int32_t> output = {0};
  SamplingParams params = sampling(1.0f);
  params.repetition_penalty = 0.01f;  // 3e38 / 0.01 overflows float
  EXPECT_EQ(sampler.sample(logits, params, SamplingContext{{}, output, 0, 0}), 0);
  EXPECT_TRUE(std::isfinite(logits[0]));
}

TEST(Sampler, OutOfVocabularyContextIdsThrowAndLeaveNoTrace) {
  Sampler sampler;
  SamplingParams params;
  params.frequency_penalty = 1.0f;
  params.repetition_penalty = 2.0f;
  const std::vector<int32_t> bad_output = {1, 1, 7};
  std::vector<float> logits = {1.0f, 1.0f, 1.0f};
  EXPECT_THROW(sampler.apply_penalties(logits, params, SamplingContext{{}, bad_output, 0, 0}),
               Error);
  const std::vector<int32_t> negative = {-1};
  EXPECT_THROW(sampler.apply_penalties(logits, params, SamplingContext{negative, {}, 0, 0}), Error);
  // A later call counts only its own tokens: id 1 once, so 1 / 2 - 1 * 1.
  const std::vector<int32_t> output = {1};
  std::vector<float> fresh = {1.0f, 1.0f, 1.0f};
  sampler.apply_penalties(fresh, params, SamplingContext{{}, output, 0, 0});
  EXPECT_EQ(fresh, (std::vector<float>{1.0f, -0.5f, 1.0f}));
}

// ---- filters ----------------------------------------------------------------------------------

TEST(Sampler, TopKOfOneEqualsGreedy) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  Sampler sampler;
  for (uint32_t trial = 0; trial < 200; ++trial) {
    std::vector<float> logits(1000);
    for (float& logit : logits) logit = normal(rng);
    if (trial % 2 == 0) logits[trial] = logits[trial + 500] = 20.0f;  // a tie for the best
    const int32_t greedy = draw(sampler, logits, SamplingParams{}, context_at(trial));
    for (const float temperature : {0.5f, 1.0f, 5.0f}) {
      EXPECT_EQ(draw(sampler, logits, sampling(temperature, 1), context_at(trial, trial)), greedy);
    }
  }
}

TEST(Sampler, TopKKeepsOnlyTheKBestWithTiesToTheLowestIds) {
  // The three best are ids 1 and 3 (5.0) and 8 (4.5); a high temperature makes all likely.
  const std::vector<float> logits = {0.0f, 5.0f, 1.0f, 5.0f, 2.0f, 4.0f, 3.0f, 0.5f, 4.5f, -1.0f};
  const std::vector<int> counts = histogram(logits, sampling(10.0f, 3), 3000);
  for (size_t id = 0; id < logits.size(); ++id) {
    const bool is_allowed = id == 1 || id == 3 || id == 8;
    EXPECT_EQ(counts[id] > 0, is_allowed) << "id " << id;
  }
  // Four-way tie for the best, top-k 2: ids 0 and 1 win the tie.
  const std::vector<int> tied = histogram({1.0f, 1.0f, 1.0f, 1.0f, 0.0f}, sampling(1.0f, 2), 2000);
  EXPECT_GT(tied[0], 0);
  EXPECT_GT(tied[1], 0);
  EXPECT_EQ(tied[2] + tied[3] + tied[4], 0);
}

TEST(Sampler, TopPKeepsTheSmallestPrefixReachingP) {
  // Probabilities by id: 0.15, 0.5, 0.05, 0.3. In order: id 1 (0.5), id 3 (0.8 cumulative).
  const std::vector<float> logits = log_of({0.15, 0.5, 0.05, 0.3});
  const std::vector<int> counts = histogram(logits, sampling(1.0f, 0, 0.7f), 2000);
  EXPECT_EQ(counts[0] + counts[2], 0);
  EXPECT_GT(counts[1], 0);
  EXPECT_GT(counts[3], 0);
  // p below the best token's probability keeps the best token alone.
  const std::vector<int> single = histogram(logits, sampling(1.0f, 0, 0.4f), 500);
  EXPECT_EQ(single[1], 500);
}

TEST(Sampler, MinPDropsTokensBelowAFractionOfTheBest) {
  // Weights by id: 0.2, 1, 0.01, 0.5, 0.05. min_p 0.1 keeps ids 1, 3 and 0.
  const std::vector<float> logits = log_of({0.2, 1.0, 0.01, 0.5, 0.05});
  const std::vector<int> counts = histogram(logits, sampling(1.0f, 0, 1.0f, 0.1f), 3000);
  EXPECT_EQ(counts[2] + counts[4], 0);
  EXPECT_GT(counts[0], 0);
  EXPECT_GT(counts[1], 0);
  EXPECT_GT(counts[3], 0);
  // min_p 1 keeps only the best token.
  const std::vector<int> best = histogram(logits, sampling(1.0f, 0, 1.0f, 1.0f), 500);
  EXPECT_EQ(best[1], 500);
}

// ---- determinism and streams ------------------------------------------------------------------

TEST(Sampler, SameInputsGiveTheSameTokenWhateverCameBefore) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> logits(500);
  for (float& logit : logits) logit = normal(rng);
  const SamplingParams params = sampling(1.0f, 100, 0.95f, 0.01f);
  Sampler sampler;
  std::vector<int32_t> first;
  for (uint32_t position = 0; position < 50; ++position) {
    first.push_back(draw(sampler, logits, params, context_at(position, 3, 1)));
  }
  // Unrelated work in between: another vocabulary size, penalties, greedy.
  SamplingParams other = sampling(0.7f);
  other.frequency_penalty = 1.0f;
  const std::vector<int32_t> output = {5, 5, 9};
  draw(sampler, std::vector<float>(50000, 0.0f), other, SamplingContext{{}, output, 9, 0});
  draw(sampler, {1.0f, 2.0f}, SamplingParams{}, context_at(0));
  Sampler fresh;
  for (uint32_t position = 0; position < 50; ++position) {
    EXPECT_EQ(draw(sampler, logits, params, context_at(position, 3, 1)), first[position]);
    EXPECT_EQ(draw(fresh, logits, params, context_at(position, 3, 1)), first[position]);
  }
}

// Two independent streams over 64 equally likely tokens agree at a position with probability
// 1/64: over 4096 positions that is 64 matches, standard deviation sqrt(4096 / 64 * 63 / 64)
// = 7.94. Correlated streams would match far more often (identical ones 4096 times).
void expect_independent(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  ASSERT_EQ(a.size(), 4096u);
  int num_matches = 0;
  for (size_t i = 0; i < a.size(); ++i) num_matches += a[i] == b[i];
  EXPECT_GT(num_matches, 64 - 6 * 7.94);
  EXPECT_LT(num_matches, 64 + 6 * 7.94);
}

TEST(Sampler, EachKeyFieldGivesAnIndependentStream) {
  const std::vector<float> logits(64, 0.0f);
  Sampler sampler;
  auto stream = [&](uint64_t seed, uint64_t request_key, uint32_t sample_idx, uint32_t shift) {
    SamplingParams params = sampling(1.0f);
    params.seed = seed;
    std::vector<int32_t> tokens;
    for (uint32_t i = 0; i < 4096; ++i) {
      tokens.push_back(
          draw(sampler, logits, params, context_at(i + shift, request_key, sample_idx)));
    }
    return tokens;
  };
  const std::vector<int32_t> base = stream(1, 100, 0, 0);
  expect_independent(base, stream(2, 100, 0, 0));
  expect_independent(base, stream(1, 101, 0, 0));
  expect_independent(base, stream(1, 100, 1, 0));
  expect_independent(base, stream(1, 100, 0, 1));  // the next position of the same stream
}

// ---- distributions ----------------------------------------------------------------------------
// Each test draws over consecutive positions and compares the counts with the distribution the
// parameters define, worked out by hand. The bounds are chi-square quantiles at 1e-6 (a correct
// sampler fails with that probability for a given seed): 23.93 for 1 degree of freedom, 27.63
// for 2, 33.38 for 4 and 40.52 for 7.

TEST(Sampler, TemperatureOneMatchesTheSoftmax) {
  const std::vector<double> probs = {0.1, 0.3, 0.02, 0.15, 0.08, 0.2, 0.05, 0.1};
  const int num_draws = 20000;
  const std::vector<int> counts = histogram(log_of(probs), sampling(1.0f), num_draws);
  EXPECT_LT(chi_square(counts, probs, num_draws), 40.52);
}

TEST(Sampler, TemperatureAndTopKMatchTheirDistribution) {
  // Weights 9, 1, 16, 4 by id; at temperature 2 they become 3, 1, 4, 2. Top-k 3 drops id 1.
  const std::vector<float> logits = log_of({9.0, 1.0, 16.0, 4.0});
  const int num_draws = 20000;
  const std::vector<int> counts = histogram(logits, sampling(2.0f, 3), num_draws);
  EXPECT_EQ(counts[1], 0);
  EXPECT_LT(chi_square(counts, {3.0 / 9, 0.0, 4.0 / 9, 2.0 / 9}, num_draws), 27.63);
}

TEST(Sampler, TemperatureAndTopPMatchTheirDistribution) {
  // Same weights: 3, 1, 4, 2 at temperature 2, probabilities 0.3, 0.1, 0.4, 0.2. In order the
  // cumulative mass is 0.4 (id 2), 0.7 (id 0): top-p 0.65 keeps ids 2 and 0, as 4/7 and 3/7.
  const std::vector<float> logits = log_of({9.0, 1.0, 16.0, 4.0});
  const int num_draws = 20000;
  const std::vector<int> counts = histogram(logits, sampling(2.0f, 0, 0.65f), num_draws);
  EXPECT_EQ(counts[1] + counts[3], 0);
  EXPECT_LT(chi_square(counts, {3.0 / 7, 0.0, 4.0 / 7, 0.0}, num_draws), 23.93);
}

TEST(Sampler, MinPMatchesItsDistribution) {
  // Weights 3, 10, 1, 5, 2: min_p 0.25 keeps weights >= 2.5, i.e. 3, 10, 5 out of 18.
  const std::vector<float> logits = log_of({3.0, 10.0, 1.0, 5.0, 2.0});
  const int num_draws = 20000;
  const std::vector<int> counts = histogram(logits, sampling(1.0f, 0, 1.0f, 0.25f), num_draws);
  EXPECT_EQ(counts[2] + counts[4], 0);
  EXPECT_LT(chi_square(counts, {3.0 / 18, 10.0 / 18, 0.0, 5.0 / 18, 0.0}, num_draws), 27.63);
}

TEST(Sampler, LargeVocabularyWithTiesMatchesTheSoftmax) {
  // 6000 tokens in six groups by id % 6: groups 0..4 have weights 1..5 (1000 equal tokens
  // each), group 5 is -inf. Group g is drawn with probability (g + 1) / 15.
  std::vector<float> logits(6000);
  for (size_t id = 0; id < logits.size(); ++id) {
    const size_t group = id % 6;
    logits[id] = group == 5 ? -kInf : static_cast<float>(std::log(static_cast<double>(group + 1)));
  }
  const int num_draws = 10000;
  const std::vector<int> counts = histogram(logits, sampling(1.0f), num_draws);
  std::vector<int> group_counts(6, 0);
  for (size_t id = 0; id < counts.size(); ++id) group_counts[id % 6] += counts[id];
  EXPECT_EQ(group_counts[5], 0);
  const std::vector<double> probs = {1.0 / 15, 2.0 / 15, 3.0 / 15, 4.0 / 15, 5.0 / 15, 0.0};
  EXPECT_LT(chi_square(group_counts, probs, num_draws), 33.38);
}

// ---- against a literal reference --------------------------------------------------------------

// The documented pipeline written the obvious way: a full sort by (logit desc, id asc), prefix
// sums, a sequential inverse-CDF walk. Penalties off, temperature > 0.
int32_t reference_sample(const std::vector<float>& logits, const SamplingParams& params,
                         float uniform) {
  std::vector<int32_t> order;
  for (size_t id = 0; id < logits.size(); ++id) {
    if (logits[id] != -kInf) order.push_back(static_cast<int32_t>(id));
  }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
  });
  if (params.top_k > 0 && static_cast<size_t>(params.top_k) < order.size()) {
    order.resize(params.top_k);
  }
  std::vector<double> weights;
  for (const int32_t id : order) {
    weights.push_back(std::exp((static_cast<double>(logits[id]) - logits[order[0]]) /
                               static_cast<double>(params.temperature)));
  }
  size_t num_kept = order.size();
  if (params.top_p < 1.0f) {
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    double cumulative = 0.0;
    for (num_kept = 0; num_kept < order.size();) {
      cumulative += weights[num_kept++];
      if (cumulative >= params.top_p * total) break;
    }
  }
  std::vector<int32_t> kept_ids;
  std::vector<double> kept_weights;
  for (size_t i = 0; i < num_kept; ++i) {
    if (weights[i] < params.min_p * weights[0]) continue;
    kept_ids.push_back(order[i]);
    kept_weights.push_back(weights[i]);
  }
  const double total = std::accumulate(kept_weights.begin(), kept_weights.end(), 0.0);
  double cumulative = 0.0;
  for (size_t i = 0; i < kept_ids.size(); ++i) {
    cumulative += kept_weights[i];
    if (cumulative > uniform * total) return kept_ids[i];
  }
  return kept_ids.back();
}

TEST(Sampler, AgreesWithTheLiteralReference) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  const SamplingParams cases[] = {
      sampling(1.0f),
      sampling(0.7f, 50),
      sampling(1.3f, 0, 0.9f),
      sampling(1.0f, 0, 1.0f, 0.05f),
      sampling(0.8f, 200, 0.8f, 0.02f),
      sampling(1.0f, 5000),
      sampling(2.0f, 0, 0.5f),
  };
  Sampler sampler;
  for (const SamplingParams& params : cases) {
    for (uint32_t trial = 0; trial < 100; ++trial) {
      std::vector<float> logits(3000);
      // Rounding to quarters makes many exact ties, so the tie order is exercised too.
      for (float& logit : logits) logit = std::round(normal(rng) * 4.0f) / 4.0f;
      for (size_t id = trial; id < logits.size(); id += 97) logits[id] = -kInf;
      const SamplingContext context = context_at(trial, trial * 31 + 5, trial % 3);
      const float uniform = sampling_uniform(params.seed, context.request_key, context.sample_idx,
                                             static_cast<uint32_t>(trial));
      EXPECT_EQ(draw(sampler, logits, params, context), reference_sample(logits, params, uniform))
          << "top_k " << params.top_k << " top_p " << params.top_p << " min_p " << params.min_p
          << " trial " << trial;
    }
  }
}

// ---- validation -------------------------------------------------------------------------------

TEST(ValidateSamplingParams, AcceptsDefaultsAndEdgeValues) {
  EXPECT_NO_THROW(validate_sampling_params(SamplingParams{}));
  SamplingParams params;
  params.temperature = 0.0f;
  params.top_k = -1;
  params.top_p = 1.0f;
  params.min_p = 1.0f;
  params.presence_penalty = -2.0f;
  params.frequency_penalty = 2.0f;
  params.stop = {"\n\n", "###"};
  EXPECT_NO_THROW(validate_sampling_params(params));
}

TEST(ValidateSamplingParams, RejectsEachBadValue) {
  struct BadCase {
    const char* field;
    void (*spoil)(SamplingParams&);
  };
  const BadCase cases[] = {
      {"n", [](SamplingParams& p) { p.n = 0; }},
      {"temperature", [](SamplingParams& p) { p.temperature = -0.1f; }},
      {"temperature", [](SamplingParams& p) { p.temperature = kInf; }},
      {"temperature", [](SamplingParams& p) { p.temperature = std::nanf(""); }},
      {"top_p", [](SamplingParams& p) { p.top_p = 0.0f; }},
      {"top_p", [](SamplingParams& p) { p.top_p = 1.5f; }},
      {"top_p", [](SamplingParams& p) { p.top_p = std::nanf(""); }},
      {"min_p", [](SamplingParams& p) { p.min_p = -0.1f; }},
      {"min_p", [](SamplingParams& p) { p.min_p = 1.1f; }},
      {"repetition_penalty", [](SamplingParams& p) { p.repetition_penalty = 0.0f; }},
      {"repetition_penalty", [](SamplingParams& p) { p.repetition_penalty = -1.0f; }},
      {"repetition_penalty", [](SamplingParams& p) { p.repetition_penalty = kInf; }},
      {"presence_penalty", [](SamplingParams& p) { p.presence_penalty = 2.5f; }},
      {"presence_penalty", [](SamplingParams& p) { p.presence_penalty = std::nanf(""); }},
      {"frequency_penalty", [](SamplingParams& p) { p.frequency_penalty = -3.0f; }},
      {"max_tokens", [](SamplingParams& p) { p.max_tokens = 0; }},
      {"stop string",
       [](SamplingParams& p) {
         p.stop = {"ok", ""};
       }},
      {"stop_token_ids",
       [](SamplingParams& p) {
         p.stop_token_ids = {2, -1};
       }},
  };
  for (const BadCase& bad : cases) {
    SamplingParams params;
    bad.spoil(params);
    EXPECT_THAT([&] { validate_sampling_params(params); },
                ThrowsMessage<Error>(HasSubstr(bad.field)))
        << bad.field;
  }
}

}  // namespace
}  // namespace sluice
