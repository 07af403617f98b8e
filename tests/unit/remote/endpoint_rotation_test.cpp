// Which endpoint gets the next request: the least busy, never one out of the rotation until
// its cool-down ends, one probe at a time, back in after a success; and the rate limiter's
// request and token buckets. Time is passed in, so nothing here sleeps.
#include "app/remote/endpoint_rotation.h"

#include <gtest/gtest.h>

#include "app/remote/rate_limiter.h"

namespace sluice::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

TEST(EndpointRotation, RequestsGoToTheLeastBusyEndpoint) {
  EndpointRotation r(3);
  const auto t = Clock::now();
  EXPECT_EQ(r.pick(t), 0u);
  EXPECT_EQ(r.pick(t), 1u);
  EXPECT_EQ(r.pick(t), 2u);
  r.succeed(1);
  EXPECT_EQ(r.pick(t), 1u);
  EXPECT_EQ(r.num_in_flight(1), 1);
}

TEST(EndpointRotation, ARetryAvoidsTheEndpointItFailedOnWhenAnotherIsUsable) {
  EndpointRotation r(2);
  const auto t = Clock::now();
  ASSERT_EQ(r.pick(t), 0u);
  r.fail(0, t);
  EXPECT_EQ(r.pick(t, 0), 1u);
  EXPECT_EQ(r.pick(t, 1), 0u);  // the only other one
}

TEST(EndpointRotation, RepeatedFailuresTakeAnEndpointOutUntilItsProbeSucceeds) {
  EndpointRotation r(2, 3);
  auto t = Clock::now();
  for (int i = 0; i < 2; ++i) {
    r.begin(0);
    EXPECT_FALSE(r.fail(0, t));
  }
  r.begin(0);
  EXPECT_TRUE(r.fail(0, t));  // the third in a row
  EXPECT_FALSE(r.is_in_rotation(0));
  EXPECT_EQ(r.cool_down_s(0), 1.0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r.pick(t), 1u);  // never 0 while it cools down
  // After the cool-down: one probe, and no second request while it runs.
  t += 1100ms;
  r.succeed(1);
  r.succeed(1);
  r.succeed(1);
  EXPECT_EQ(r.pick(t), 1u);  // endpoints in the rotation come first
  EndpointRotation alone(1, 3);
  for (int i = 0; i < 3; ++i) {
    alone.begin(0);
    alone.fail(0, t);
  }
  EXPECT_EQ(alone.pick(t), std::nullopt);
  EXPECT_EQ(alone.next_usable(t), t + 1s);
  t += 1s;
  EXPECT_EQ(alone.pick(t), 0u);            // the probe
  EXPECT_EQ(alone.pick(t), std::nullopt);  // one at a time
  alone.fail(0, t);                        // the probe failed: twice as long
  EXPECT_EQ(alone.cool_down_s(0), 2.0);
  EXPECT_EQ(alone.pick(t + 1s), std::nullopt);
  EXPECT_EQ(alone.pick(t + 2s), 0u);
  alone.succeed(0);
  EXPECT_TRUE(alone.is_in_rotation(0));
  EXPECT_EQ(alone.pick(t + 2s), 0u);
  EXPECT_EQ(alone.pick(t + 2s), 0u);  // in the rotation again: as many as asked
}

TEST(EndpointRotation, CoolDownsDoubleUpToAMinute) {
  EndpointRotation r(1, 1);
  auto t = Clock::now();
  r.begin(0);
  r.fail(0, t);
  double expected = 1.0;
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(r.cool_down_s(0), expected);
    t = r.next_usable(t);
    ASSERT_EQ(r.pick(t), 0u);
    r.fail(0, t);
    expected = std::min(60.0, expected * 2);
  }
}

TEST(EndpointRotation, RetryAfterHoldsAnEndpointBackWithoutCountingAFailure) {
  EndpointRotation r(1, 1);
  const auto t = Clock::now();
  ASSERT_EQ(r.pick(t), 0u);
  r.end_without_outcome(0);
  r.hold_back(0, t + 5s);
  EXPECT_TRUE(r.is_in_rotation(0));
  EXPECT_EQ(r.pick(t + 4s), std::nullopt);
  EXPECT_EQ(r.next_usable(t), t + 5s);
  EXPECT_EQ(r.pick(t + 5s), 0u);
}

TEST(RateLimiter, RequestsPerMinuteSpaceRequestsOut) {
  const auto t = Clock::now();
  RateLimiter limiter(60, 0, t);  // one a second
  EXPECT_EQ(limiter.wait(t), Clock::duration::zero());
  limiter.take(100, t);
  const auto wait = limiter.wait(t);
  EXPECT_GT(wait, 900ms);
  EXPECT_LE(wait, 1001ms);
  EXPECT_EQ(limiter.wait(t + 1001ms), Clock::duration::zero());
}

TEST(RateLimiter, TokensPerMinuteLetOneBigRequestRunThenMakeTheNextWait) {
  const auto t = Clock::now();
  RateLimiter limiter(0, 600, t);  // ten tokens a second, a bucket of 100
  EXPECT_EQ(limiter.wait(t), Clock::duration::zero());
  limiter.take(1000, t);  // bigger than the bucket: it runs, the bucket goes into debt
  const auto wait = limiter.wait(t);
  EXPECT_GT(wait, 98s);
  EXPECT_LT(wait, 101s);
  // The server said it cost 100 tokens, not 1000: the difference comes back.
  limiter.correct(1000, 100);
  EXPECT_LT(limiter.wait(t), 10s);
}

TEST(RateLimiter, NoLimitsNeverWait) {
  const auto t = Clock::now();
  RateLimiter limiter(0, 0, t);
  for (int i = 0; i < 1000; ++i) limiter.take(1e6, t);
  EXPECT_EQ(limiter.wait(t), Clock::duration::zero());
}

}  // namespace
}  // namespace sluice::test
