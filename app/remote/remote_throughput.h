// The generation rate of remote servers, seen only through whole answers. Counting the tokens of
// the answers that came back over the time since the start draws a ramp the servers never had:
// the first answers are the short ones, while the long ones are still being generated. Each
// answer instead says how fast its own request went (its output tokens over its time on the
// wire); the servers' rate is that per-request rate times the requests in flight (Little's law),
// which is right from the first answer on.
#pragma once

#include <cstdint>
#include <vector>

namespace sluice {

class RemoteThroughput {
 public:
  // window_s: how far back answers count.
  explicit RemoteThroughput(double window_s) : window_s_(window_s) {}

  // Counts an answer that came back at at_s (seconds since the start) with tokens output tokens
  // after wire_s seconds on the wire, with in_flight requests (this one included) running when it
  // came back. Returns the estimated generation rate in tokens per second.
  double add_answer(double at_s, int64_t tokens, double wire_s, int64_t in_flight);

 private:
  struct Answer {
    double at_s;
    int64_t tokens;
    double wire_s;
  };
  double window_s_;
  std::vector<Answer> recent_;
};

}  // namespace sluice
