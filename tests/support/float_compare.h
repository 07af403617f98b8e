// Comparing floats in tests without letting a NaN through: `std::max(worst, diff)` keeps `worst`
// when diff is NaN (NaN compares false), and `diff > bound` is false for NaN, so a kernel that
// wrote NaNs would pass a test built on either.
#pragma once

#include <cmath>

namespace sluice::test {

// The larger of a running maximum and a new value, a NaN winning (and staying): the worst
// difference over values among which one is NaN is NaN, which every bound check fails.
template <typename F>
F nan_max(F worst, F value) {
  if (std::isnan(worst)) return worst;
  return std::isnan(value) || value > worst ? value : worst;
}

}  // namespace sluice::test
