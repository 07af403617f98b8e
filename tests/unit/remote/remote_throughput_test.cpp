// RemoteThroughput: the servers' generation rate from whole answers, flat from the first answer
// when the servers run at a steady rate (issue 33: a remote run drew a ramp it did not have).
#include "app/remote/remote_throughput.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <queue>
#include <vector>

namespace sluice {
namespace {

// A server that decodes every running request at 100 tokens/s, 16 requests at once, over
// requests of mixed lengths (10 to 400 tokens), each replaced by the next when it finishes.
TEST(RemoteThroughput, SteadyServersGiveASteadyRateFromTheFirstAnswer) {
  constexpr int kConcurrency = 16;
  constexpr double kPerRequestRate = 100.0;
  std::vector<int> lengths;
  for (int i = 0; i < 200; ++i) lengths.push_back(10 + (i * 97) % 391);
  struct Running {
    double end_s;
    double start_s;
    int tokens;
    bool operator>(const Running& o) const { return end_s > o.end_s; }
  };
  std::priority_queue<Running, std::vector<Running>, std::greater<>> running;
  size_t next = 0;
  for (; next < kConcurrency; ++next)
    running.push({lengths[next] / kPerRequestRate, 0.0, lengths[next]});
  RemoteThroughput throughput(5.0);
  double tokens_so_far = 0;
  int answers = 0;
  while (next < lengths.size()) {  // while the servers stay full
    const Running done = running.top();
    running.pop();
    tokens_so_far += done.tokens;
    const double rate =
        throughput.add_answer(done.end_s, done.tokens, done.end_s - done.start_s, kConcurrency);
    EXPECT_NEAR(rate, kConcurrency * kPerRequestRate, 1e-6) << "answer " << answers;
    if (answers == 0) {
      // What counting whole answers since the start gives: far below the servers' rate.
      EXPECT_LT(tokens_so_far / done.end_s, 0.2 * kConcurrency * kPerRequestRate);
    }
    running.push({done.end_s + lengths[next] / kPerRequestRate, done.end_s, lengths[next]});
    ++next;
    ++answers;
  }
  EXPECT_GT(answers, 100);
}

TEST(RemoteThroughput, FewerRequestsInFlightMeanALowerRate) {
  RemoteThroughput throughput(5.0);
  EXPECT_DOUBLE_EQ(throughput.add_answer(1.0, 100, 1.0, 8), 800.0);
  EXPECT_DOUBLE_EQ(throughput.add_answer(2.0, 100, 1.0, 1), 100.0);  // the run winds down
  // Answers older than the window no longer count.
  EXPECT_DOUBLE_EQ(throughput.add_answer(9.0, 50, 1.0, 2), 100.0);
  // An answer timed as zero seconds does not divide by zero; no tokens give a rate of zero.
  RemoteThroughput other(5.0);
  EXPECT_GT(other.add_answer(0.5, 10, 0.0, 1), 0.0);
  RemoteThroughput empty(5.0);
  EXPECT_DOUBLE_EQ(empty.add_answer(0.5, 0, 0.2, 4), 0.0);
}

}  // namespace
}  // namespace sluice
