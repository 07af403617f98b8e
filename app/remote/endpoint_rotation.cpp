#include "app/remote/endpoint_rotation.h"

#include <algorithm>
#include <tuple>

namespace sluice {

namespace {

constexpr double kFirstCoolDownS = 1.0;
constexpr double kMaxCoolDownS = 60.0;

EndpointRotation::Clock::duration seconds(double s) {
  return std::chrono::duration_cast<EndpointRotation::Clock::duration>(
      std::chrono::duration<double>(s));
}

}  // namespace

EndpointRotation::EndpointRotation(size_t num_endpoints, int max_failures)
    : states_(num_endpoints), max_failures_(std::max(1, max_failures)) {}

bool EndpointRotation::is_usable(const State& s, Clock::time_point now) const {
  if (now < s.usable_from) return false;
  return !s.is_out || !s.is_probing;  // an endpoint out of rotation takes one probe at a time
}

std::optional<size_t> EndpointRotation::pick(Clock::time_point now, std::optional<size_t> avoid) {
  std::optional<size_t> best;
  for (size_t i = 0; i < states_.size(); ++i) {
    const State& s = states_[i];
    if (!is_usable(s, now)) continue;
    if (!best) {
      best = i;
      continue;
    }
    const State& b = states_[*best];
    // In-rotation endpoints first, then the one not to repeat, then the least busy.
    const auto rank = [&](const State& x, size_t idx) {
      return std::make_tuple(x.is_out, avoid && idx == *avoid, x.in_flight);
    };
    if (rank(s, i) < rank(b, *best)) best = i;
  }
  if (best) begin(*best);
  return best;
}

EndpointRotation::Clock::time_point EndpointRotation::next_usable(Clock::time_point now) const {
  Clock::time_point next = Clock::time_point::max();
  for (const State& s : states_) {
    if (s.is_out && s.is_probing) continue;  // usable again once its probe ends
    next = std::min(next, std::max(now, s.usable_from));
  }
  return next;
}

void EndpointRotation::begin(size_t endpoint) {
  State& s = states_[endpoint];
  ++s.in_flight;
  if (s.is_out) s.is_probing = true;
}

void EndpointRotation::succeed(size_t endpoint) {
  State& s = states_[endpoint];
  s.in_flight = std::max(0, s.in_flight - 1);
  s.consecutive_failures = 0;
  s.is_out = false;
  s.is_probing = false;
  s.cool_down_s = 0.0;
}

bool EndpointRotation::fail(size_t endpoint, Clock::time_point now) {
  State& s = states_[endpoint];
  s.in_flight = std::max(0, s.in_flight - 1);
  ++s.consecutive_failures;
  if (s.is_out) {  // its probe failed: wait longer
    s.is_probing = false;
    s.cool_down_s = std::min(kMaxCoolDownS, s.cool_down_s * 2);
    s.usable_from = now + seconds(s.cool_down_s);
    return false;
  }
  if (s.consecutive_failures < max_failures_) return false;
  take_out(endpoint, now);
  return true;
}

void EndpointRotation::hold_back(size_t endpoint, Clock::time_point until) {
  State& s = states_[endpoint];
  s.usable_from = std::max(s.usable_from, until);
}

void EndpointRotation::end_without_outcome(size_t endpoint) {
  State& s = states_[endpoint];
  s.in_flight = std::max(0, s.in_flight - 1);
  s.is_probing = false;
}

void EndpointRotation::take_out(size_t endpoint, Clock::time_point now) {
  State& s = states_[endpoint];
  s.is_out = true;
  s.is_probing = false;
  s.cool_down_s = kFirstCoolDownS;
  s.usable_from = now + seconds(s.cool_down_s);
}

bool EndpointRotation::is_in_rotation(size_t endpoint) const {
  return !states_[endpoint].is_out;
}
double EndpointRotation::cool_down_s(size_t endpoint) const {
  return states_[endpoint].cool_down_s;
}
int EndpointRotation::num_in_flight(size_t endpoint) const {
  return states_[endpoint].in_flight;
}

}  // namespace sluice
