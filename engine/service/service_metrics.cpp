#include "engine/service/service_metrics.h"

#include <algorithm>

namespace sluice {

LatencyHistogram::LatencyHistogram(std::vector<double> bounds_s)
    : upper_bounds_s(std::move(bounds_s)), counts(upper_bounds_s.size() + 1, 0) {}

void LatencyHistogram::observe(double value_s) {
  const auto it = std::lower_bound(upper_bounds_s.begin(), upper_bounds_s.end(), value_s);
  ++counts[static_cast<size_t>(it - upper_bounds_s.begin())];
  ++count;
  sum_s += value_s;
}

int64_t LatencyHistogram::cumulative_count(size_t bucket_idx) const {
  int64_t total = 0;
  for (size_t i = 0; i <= bucket_idx && i < counts.size(); ++i) total += counts[i];
  return total;
}

std::vector<double> ttft_bounds_s() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25, 0.5,
          0.75,  1.0,   2.5,  5.0,  7.5,  10.0, 20.0, 40.0, 80.0};
}

std::vector<double> inter_token_bounds_s() {
  return {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
          0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
}

}  // namespace sluice
