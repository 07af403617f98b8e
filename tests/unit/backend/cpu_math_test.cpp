#include "engine/backend/cpu/cpu_math.h"
#include "tests/support/float_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace sluice {
namespace {

TEST(CpuMath, FastExpIsWithinThreeTenMillionthsRelative) {
  double worst = 0.0;
  for (float x = -87.0f; x <= 88.0f; x += 0.001953125f) {
    const double exact = std::exp(static_cast<double>(x));
    worst = test::nan_max(worst, std::fabs(fast_exp(x) - exact) / exact);
  }
  EXPECT_LT(worst, 3e-7);
  EXPECT_EQ(fast_exp(0.0f), 1.0f);
  EXPECT_EQ(fast_exp(-200.0f), 0.0f);
  EXPECT_EQ(fast_exp(-std::numeric_limits<float>::infinity()), 0.0f);
}

// The array form runs in an ISA clone (it may fuse multiply-adds), so it is held to the same
// accuracy bound rather than to bit equality with the inline form.
TEST(CpuMath, ExpInplaceIsAccurate) {
  std::vector<float> x = {-3.5f, -1.0f, 0.25f, 2.0f,  10.0f, -90.0f,
                          5.5f,  1e-3f, -7.0f, 60.0f, -80.0f};
  std::vector<float> y = x;
  exp_inplace(y.data(), static_cast<int64_t>(y.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double exact = x[i] < -87.0f ? 0.0 : std::exp(static_cast<double>(x[i]));
    EXPECT_NEAR(y[i], exact, 3e-7 * exact) << x[i];
  }
}

TEST(CpuMath, LaneReductionsAreExactOnIntegers) {
  // Sums and maxima of small integers are exact in float whatever the order, so any bug in the
  // lane bookkeeping (a skipped or doubled element) shows as a wrong value.
  std::mt19937 rng(5);
  for (int n = 1; n < 70; ++n) {
    std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    double sum = 0, dot = 0;
    float max_value = -1e9f;
    for (int i = 0; i < n; ++i) {
      a[static_cast<size_t>(i)] = static_cast<float>(static_cast<int>(rng() % 21) - 10);
      b[static_cast<size_t>(i)] = static_cast<float>(static_cast<int>(rng() % 7) - 3);
      sum += a[static_cast<size_t>(i)];
      dot += a[static_cast<size_t>(i)] * b[static_cast<size_t>(i)];
      max_value = std::max(max_value, a[static_cast<size_t>(i)]);
    }
    EXPECT_EQ(lane_sum(a.data(), n), sum) << n;
    EXPECT_EQ(dot_product(a.data(), b.data(), n), dot) << n;
    EXPECT_EQ(lane_max(a.data(), n), max_value) << n;
  }
}

TEST(CpuMath, SiluMulMatchesTheDefinition) {
  std::vector<float> gate = {-6.0f, -1.0f, 0.0f, 0.5f, 3.0f, 12.0f, -0.25f, 2.5f, 1.0f};
  std::vector<float> up = {1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 1.0f, 4.0f, -2.0f, 0.0f};
  std::vector<float> out = gate;
  silu_mul_inplace(out.data(), up.data(), static_cast<int64_t>(out.size()));
  for (size_t i = 0; i < gate.size(); ++i) {
    const double g = gate[i];
    const double expected = g / (1.0 + std::exp(-g)) * up[i];
    EXPECT_NEAR(out[i], expected, 1e-6 * (1.0 + std::fabs(expected))) << i;
  }
}

}  // namespace
}  // namespace sluice
