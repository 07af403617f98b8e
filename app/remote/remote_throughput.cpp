#include "app/remote/remote_throughput.h"

#include <algorithm>

namespace sluice {

double RemoteThroughput::add_answer(double at_s, int64_t tokens, double wire_s, int64_t in_flight) {
  constexpr double kShortestWireS = 1e-3;  // an answer faster than this is timed as this
  recent_.push_back({at_s, std::max<int64_t>(tokens, 0), std::max(wire_s, kShortestWireS)});
  std::erase_if(recent_, [&](const Answer& a) { return a.at_s < at_s - window_s_; });
  double total_tokens = 0;
  double total_wire_s = 0;
  for (const Answer& a : recent_) {
    total_tokens += static_cast<double>(a.tokens);
    total_wire_s += a.wire_s;
  }
  const double per_request = total_tokens / total_wire_s;
  return per_request * static_cast<double>(std::max<int64_t>(in_flight, 1));
}

}  // namespace sluice
