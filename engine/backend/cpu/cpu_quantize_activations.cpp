#include "engine/backend/cpu/cpu_quantize_activations.h"

#include <cassert>
#include <cmath>
#include <cstring>

#include "engine/backend/cpu/cpu_math.h"
#include "engine/core/dtype.h"

namespace sluice {

namespace {

using quant::kBlock32;
using quant::kBlockK;

// Adding and subtracting 1.5 * 2^23 rounds to the nearest integer, ties to even, for
// |v| < 2^22 (ggml's nearest_int and what _mm256_round_ps(_MM_ROUND_NEAREST) gives). Outside
// that range (only from inf or NaN inputs) the result is clamped below, never undefined.
SLUICE_ALWAYS_INLINE int32_t round_to_nearest_even(float v) {
  const float shifted = v + 12582912.0f;
  int32_t bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  return (bits & 0x007fffff) - 0x00400000;
}

SLUICE_ALWAYS_INLINE int8_t clamp_to_int8(int32_t v) {
  // -127, not -128: the kernels negate activations (sign tricks) and |q| <= 127 keeps every
  // 16-bit pair sum in range.
  return static_cast<int8_t>(v < -127 ? -127 : (v > 127 ? 127 : v));
}

// max |x[i]| over n values, compared as bit patterns (equal to the float order for every
// non-NaN value, and it vectorises without -ffast-math).
SLUICE_ALWAYS_INLINE float max_abs(const float* x, int n) {
  uint32_t max_bits = 0;
  for (int i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, sizeof bits);
    bits &= 0x7fffffffu;
    max_bits = bits > max_bits ? bits : max_bits;
  }
  float m;
  std::memcpy(&m, &max_bits, sizeof m);
  return m;
}

// One 32-block the way ggml's AVX2 quantize_row_q8_0/q8_1 does it; returns the float d.
SLUICE_ALWAYS_INLINE float quantize_block32(const float* x, int8_t* q) {
  const float amax = max_abs(x, kBlock32);
  const float d = amax / 127.0f;
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  for (int i = 0; i < kBlock32; ++i) {
    const float scaled = x[i] * id;  // one rounding, then the exact round-to-integer
    q[i] = clamp_to_int8(round_to_nearest_even(scaled));
  }
  return d;
}

}  // namespace

int64_t activation_block_elements(ActivationBlockType type) {
  return type == ActivationBlockType::Q8_K ? kBlockK : kBlock32;
}

SLUICE_CPU_CLONES void quantize_row_q8_0(const float* x, quant::BlockQ8_0* y, int64_t n) {
  assert(n % kBlock32 == 0);  // callers validated the row length
  for (int64_t b = 0; b < n / kBlock32; ++b) {
    const float d = quantize_block32(x + b * kBlock32, y[b].qs);
    y[b].d = f32_to_f16(d);
  }
}

SLUICE_CPU_CLONES void quantize_row_q8_1(const float* x, quant::BlockQ8_1* y, int64_t n) {
  assert(n % kBlock32 == 0);  // callers validated the row length
  for (int64_t b = 0; b < n / kBlock32; ++b) {
    const float d = quantize_block32(x + b * kBlock32, y[b].qs);
    int32_t sum = 0;
    for (int i = 0; i < kBlock32; ++i) sum += y[b].qs[i];
    y[b].d = f32_to_f16(d);
    y[b].s = f32_to_f16(d * static_cast<float>(sum));
  }
}

SLUICE_CPU_CLONES void quantize_row_q8_K(const float* x, quant::BlockQ8_K* y, int64_t n) {
  assert(n % kBlockK == 0);  // callers validated the row length
  for (int64_t b = 0; b < n / kBlockK; ++b, x += kBlockK) {
    quant::BlockQ8_K& out = y[b];
    // The first element of largest magnitude, with its sign, in two passes that vectorise (a
    // running "if (|x| > amax)" is a chain of 256 dependent steps): the largest magnitude,
    // compared as bit patterns (NaNs, which never compare greater, left out), then the first
    // element that has it.
    uint32_t max_bits = 0;
    for (int i = 0; i < kBlockK; ++i) {
      uint32_t bits;
      std::memcpy(&bits, x + i, sizeof bits);
      bits &= 0x7fffffffu;
      bits *= static_cast<uint32_t>(bits <= 0x7f800000u);
      max_bits = bits > max_bits ? bits : max_bits;
    }
    float amax;
    std::memcpy(&amax, &max_bits, sizeof amax);
    if (amax == 0.0f) {
      out.d = 0.0f;
      std::memset(out.qs, 0, sizeof out.qs);
      std::memset(out.bsums, 0, sizeof out.bsums);
      continue;
    }
    int first = kBlockK;
    for (int i = 0; i < kBlockK; ++i) {
      const int candidate = std::fabs(x[i]) == amax ? i : kBlockK;
      first = candidate < first ? candidate : first;
    }
    const float iscale = -127.0f / x[first];
    for (int i = 0; i < kBlockK; ++i) {
      const int32_t v = round_to_nearest_even(iscale * x[i]);
      out.qs[i] = clamp_to_int8(v);
    }
    for (int g = 0; g < kBlockK / 16; ++g) {
      int32_t sum = 0;
      for (int i = 0; i < 16; ++i) sum += out.qs[16 * g + i];
      out.bsums[g] = static_cast<int16_t>(sum);
    }
    out.d = 1.0f / iscale;
  }
}

}  // namespace sluice
