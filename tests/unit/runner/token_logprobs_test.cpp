// token_logprobs against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "engine/sched/token_logprobs.h"

namespace sluice {
namespace {

TEST(TokenLogprobs, AreTheLogSoftmaxOfTheLogits) {
  // exp(logits) = 1, 2, 3, 4 (sum 10): probabilities 0.1, 0.2, 0.3, 0.4, wherever they start.
  for (const float shift : {0.0f, 100.0f, -50.0f}) {
    const std::vector<float> logits = {shift + std::log(1.0f), shift + std::log(2.0f),
                                       shift + std::log(3.0f), shift + std::log(4.0f)};
    const TokenLogprobs lp = token_logprobs(logits, 1, 3);
    EXPECT_NEAR(lp.logprob, std::log(0.2f), 1e-5f) << shift;
    ASSERT_EQ(lp.top.size(), 3u);
    EXPECT_EQ(lp.top[0].first, 3);
    EXPECT_NEAR(lp.top[0].second, std::log(0.4f), 1e-5f);
    EXPECT_EQ(lp.top[1].first, 2);
    EXPECT_NEAR(lp.top[1].second, std::log(0.3f), 1e-5f);
    EXPECT_EQ(lp.top[2].first, 1);
    EXPECT_NEAR(lp.top[2].second, std::log(0.2f), 1e-5f);
  }
}

TEST(TokenLogprobs, TiesGoToTheLowerIdAndTopIsCappedByTheVocabulary) {
  const std::vector<float> logits = {1.0f, 2.0f, 2.0f, 0.5f, 2.0f};
  const TokenLogprobs lp = token_logprobs(logits, 0, 2);
  ASSERT_EQ(lp.top.size(), 2u);
  EXPECT_EQ(lp.top[0].first, 1);
  EXPECT_EQ(lp.top[1].first, 2);
  EXPECT_EQ(token_logprobs(logits, 4, 20).top.size(), 5u);
  EXPECT_TRUE(token_logprobs(logits, 4, 0).top.empty());
}

TEST(TokenLogprobs, ImpossibleTokensAreMinusInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> logits = {-inf, 0.0f, -inf, 0.0f};
  const TokenLogprobs lp = token_logprobs(logits, 0, 4);
  EXPECT_EQ(lp.logprob, -inf);
  EXPECT_NEAR(lp.top[0].second, std::log(0.5f), 1e-6f);
  EXPECT_EQ(lp.top[3].second, -inf);
}

}  // namespace
}  // namespace sluice
