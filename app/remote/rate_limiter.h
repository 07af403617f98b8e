// Keeps a remote job under a server's request and token limits (requests per minute, tokens per
// minute). Each limit is a bucket that refills at limit/60 per second and holds at most ten
// seconds' worth. A request starts when the request bucket holds one and the token bucket is
// above zero, and takes its cost out, so one request bigger than the token bucket still runs
// (the bucket goes into debt and the next ones wait). A request's token cost is estimated before it
// runs (its prompt's bytes / 4 plus max_tokens) and corrected with the usage the server reports.
// Not thread-safe; time is passed in.
#pragma once

#include <chrono>

namespace sluice {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  // 0 = no limit.
  RateLimiter(double requests_per_minute, double tokens_per_minute, Clock::time_point now);

  // Returns how long until a request may start (zero: now).
  Clock::duration wait(Clock::time_point now);
  // A request starts with this token cost estimate.
  void take(double estimated_tokens, Clock::time_point now);
  // Its real cost is known: the difference goes back into (or out of) the bucket.
  void correct(double estimated_tokens, double actual_tokens);

 private:
  struct Bucket {
    double per_s = 0.0;  // 0: no limit
    double capacity = 0.0;
    double level = 0.0;
  };
  void refill(Clock::time_point now);
  static Clock::duration wait_of(const Bucket& b, double need);

  Bucket requests_;
  Bucket tokens_;
  Clock::time_point last_;
};

}  // namespace sluice
