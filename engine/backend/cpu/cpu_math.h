// Vectorisable float kernels for the CPU backend. Each result depends only on its inputs, in a
// fixed operation order, so outputs are bit-identical however a batch is composed. Hot loops
// are compiled for AVX2 and AVX-512 besides the baseline and picked at load time (GCC's
// target_clones on the caller; the inline helpers below are compiled into each clone), since
// the engine must run on any x86-64 but should use what the CPU has.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
#define SLUICE_CPU_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SLUICE_CPU_CLONES
#endif
#define SLUICE_ALWAYS_INLINE inline __attribute__((always_inline))

namespace sluice {

// exp(x) = 2^k * exp(r), k = round(x / ln 2), |r| <= ln2 / 2, with a degree-6 polynomial for
// exp(r); relative error below 3e-7 (about 2.5 ulp) on [-87, 88], 0 below -87.
SLUICE_ALWAYS_INLINE float fast_exp(float x) {
  const float clamped = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
  // Adding and subtracting 1.5 * 2^23 rounds to the nearest integer (ties to even) in the
  // default rounding mode, and unlike roundevenf it vectorises.
  const float k = (clamped * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  // ln 2 split in two so that r is exact to float precision.
  const float r = (clamped - k * 0.693145751953125f) - k * 1.428606765330187045e-06f;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(k) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return x < -87.0f ? 0.0f : p * scale;
}

// Sum of a[i] * b[i] over n values in eight interleaved lanes, then a fixed tree.
SLUICE_ALWAYS_INLINE float dot_product(const float* __restrict a, const float* __restrict b,
                                       int64_t n) {
  float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) lanes[l] += a[i + l] * b[i + l];
  }
  for (int l = 0; i < n; ++i, ++l) lanes[l] += a[i] * b[i];
  return ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) +
         ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
}

// Sum of x[i] over n values in eight interleaved lanes, then a fixed tree.
SLUICE_ALWAYS_INLINE float lane_sum(const float* __restrict x, int64_t n) {
  float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) lanes[l] += x[i + l];
  }
  for (int l = 0; i < n; ++i, ++l) lanes[l] += x[i];
  return ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) +
         ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
}

// Maximum of x[i] over n values (n >= 1) in eight interleaved lanes, then a fixed tree; NaN
// inputs are not expected (attention scores are finite).
SLUICE_ALWAYS_INLINE float lane_max(const float* __restrict x, int64_t n) {
  float lanes[8];
  for (int l = 0; l < 8; ++l) lanes[l] = x[0];
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) lanes[l] = lanes[l] > x[i + l] ? lanes[l] : x[i + l];
  }
  for (int l = 0; i < n; ++i, ++l) lanes[l] = lanes[l] > x[i] ? lanes[l] : x[i];
  const float a = lanes[0] > lanes[4] ? lanes[0] : lanes[4],
              b = lanes[1] > lanes[5] ? lanes[1] : lanes[5];
  const float c = lanes[2] > lanes[6] ? lanes[2] : lanes[6],
              d = lanes[3] > lanes[7] ? lanes[3] : lanes[7];
  const float ab = a > b ? a : b, cd = c > d ? c : d;
  return ab > cd ? ab : cd;
}

// x[i] = exp(x[i]) over n values (fast_exp).
void exp_inplace(float* x, int64_t n);

// gate[i] = silu(gate[i]) * up[i] over n values.
void silu_mul_inplace(float* gate, const float* up, int64_t n);

}  // namespace sluice
