// Which remote endpoint takes the next request. Requests go to the healthy endpoint with the
// fewest in flight; an endpoint that fails `max_failures` times in a row (connection errors,
// 5xx, timeouts, malformed answers) leaves the rotation for a cool-down that doubles with each
// further failure (1 s to 60 s), then gets one probe request: success brings it back. A 429 or
// 503's Retry-After holds an endpoint back without counting as a failure. Not thread-safe: the
// driver calls it under its lock. Time is passed in, so tests need no clock.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace sluice {

class EndpointRotation {
 public:
  using Clock = std::chrono::steady_clock;

  EndpointRotation(size_t num_endpoints, int max_failures = 3);

  // Returns the endpoint for the next request, preferring one other than avoid (the endpoint
  // the request just failed on) when another is usable; nullopt when none is usable now.
  std::optional<size_t> pick(Clock::time_point now, std::optional<size_t> avoid = std::nullopt);
  // When an endpoint is next usable (now when one is); time_point::max() never happens: a
  // cooled-down endpoint is always probed again eventually.
  Clock::time_point next_usable(Clock::time_point now) const;

  void begin(size_t endpoint);  // a request went to it (pick does this)
  // The request ended: it succeeded (the endpoint is healthy again), failed on the endpoint, or
  // ended with neither (turned away with 429, or aborted by the client).
  void succeed(size_t endpoint);
  // Returns true when this failure took the endpoint out of the rotation.
  bool fail(size_t endpoint, Clock::time_point now);
  // Holds the endpoint back until then (a Retry-After); the request's own end is reported apart.
  void hold_back(size_t endpoint, Clock::time_point until);
  void end_without_outcome(size_t endpoint);

  // Takes an endpoint out before any request (it did not answer the start-up check).
  void take_out(size_t endpoint, Clock::time_point now);

  bool is_in_rotation(size_t endpoint) const;
  double cool_down_s(size_t endpoint) const;
  int num_in_flight(size_t endpoint) const;

 private:
  struct State {
    int in_flight = 0;
    int consecutive_failures = 0;
    bool is_out = false;
    bool is_probing = false;  // out, and its probe request is in flight
    double cool_down_s = 0.0;
    Clock::time_point usable_from{};
  };
  bool is_usable(const State& s, Clock::time_point now) const;

  std::vector<State> states_;
  int max_failures_;
};

}  // namespace sluice
