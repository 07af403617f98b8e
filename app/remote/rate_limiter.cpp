#include "app/remote/rate_limiter.h"

#include <algorithm>

namespace sluice {

namespace {

constexpr double kBurstS = 10.0;  // a bucket holds this many seconds of its rate

}  // namespace

RateLimiter::RateLimiter(double requests_per_minute, double tokens_per_minute,
                         Clock::time_point now)
    : last_(now) {
  for (auto [bucket, per_minute] :
       {std::pair{&requests_, requests_per_minute}, std::pair{&tokens_, tokens_per_minute}}) {
    bucket->per_s = std::max(0.0, per_minute) / 60.0;
    bucket->capacity = std::max(1.0, bucket->per_s * kBurstS);
    bucket->level =
        bucket->per_s > 0 ? std::min(bucket->capacity, std::max(1.0, bucket->per_s)) : 0.0;
  }
}

void RateLimiter::refill(Clock::time_point now) {
  const double dt = std::chrono::duration<double>(now - last_).count();
  if (dt <= 0) return;
  last_ = now;
  for (Bucket* b : {&requests_, &tokens_}) {
    if (b->per_s > 0) b->level = std::min(b->capacity, b->level + dt * b->per_s);
  }
}

RateLimiter::Clock::duration RateLimiter::wait_of(const Bucket& b, double need) {
  if (b.per_s <= 0 || b.level >= need) return Clock::duration::zero();
  const double s = (need - b.level) / b.per_s;
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

RateLimiter::Clock::duration RateLimiter::wait(Clock::time_point now) {
  refill(now);
  // A request needs a whole request in its bucket; tokens only a level above zero (debt).
  return std::max(wait_of(requests_, 1.0), wait_of(tokens_, 1e-6));
}

void RateLimiter::take(double estimated_tokens, Clock::time_point now) {
  refill(now);
  if (requests_.per_s > 0) requests_.level -= 1.0;
  if (tokens_.per_s > 0) tokens_.level -= std::max(0.0, estimated_tokens);
}

void RateLimiter::correct(double estimated_tokens, double actual_tokens) {
  if (tokens_.per_s > 0)
    tokens_.level = std::min(tokens_.capacity, tokens_.level + estimated_tokens - actual_tokens);
}

}  // namespace sluice
