// FP8 E4M3 (OCP "e4m3fn": 1 sign, 4 exponent bits with bias 7, 3 mantissa bits, no infinity,
// largest finite 448) as the KV cache stores it, with the per-head scale that maps a head's
// values onto the format's range. Host and device code: the CUDA kernels (kernels/kv_cache_fp8)
// quantize and read their cache with these functions, and the CPU backend rounds its K and V
// with the same ones when asked to reproduce that cache (CpuBackendOptions::round_kv_to_fp8), so
// a cached value is the same bits on both sides.
//
// A (token, KV head) row of head_dim values is stored as codes of value / scale with scale =
// amax / 448 (amax the row's largest magnitude; 0 for a row of zeros, whose codes are all 0),
// and read back as decode(code) * scale. Encoding rounds to nearest, ties to even, and
// saturates at +-448; the scale keeps every value inside the range, so only rounding is lost
// (3 mantissa bits: a relative error of at most 2^-4 for values above 2^-6 x scale).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "engine/core/host_device.h"

namespace sluice {

inline constexpr float kFp8E4M3Max = 448.0f;

namespace fp8_detail {

SLUICE_HOST_DEVICE inline float bits_to_float(uint32_t bits) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
#endif
}

SLUICE_HOST_DEVICE inline uint32_t float_to_bits(float value) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(value);
#else
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
#endif
}

}  // namespace fp8_detail

// The value of a code. Normal codes (exponent field >= 1) move their exponent and mantissa into a
// float's fields and rebias (127 - 7 = 120); subnormals are mantissa x 2^-9.
SLUICE_HOST_DEVICE inline float fp8_e4m3_to_float(uint8_t code) {
  const uint32_t magnitude = code & 0x7Fu;
  const float value = magnitude >= 8u ? fp8_detail::bits_to_float((magnitude << 20) + (120u << 23))
                                      : static_cast<float>(magnitude) * 0.001953125f;  // 2^-9
  return (code & 0x80u) != 0u ? -value : value;
}

// The code nearest x (ties to even), saturating at +-448 (NaN saturates too: a cache never holds
// one). Below 2^-6 the format is subnormal with steps of 2^-9, so the code is rint(|x| * 2^9),
// which reaches 8 (= 2^-6, the smallest normal) exactly where rounding carries into it.
SLUICE_HOST_DEVICE inline uint8_t float_to_fp8_e4m3(float x) {
  const uint32_t sign = (fp8_detail::float_to_bits(x) >> 24) & 0x80u;
  float magnitude = fabsf(x);
  if (!(magnitude < kFp8E4M3Max)) magnitude = kFp8E4M3Max;
  uint32_t code;
  if (magnitude < 0.015625f) {
    code = static_cast<uint32_t>(rintf(magnitude * 512.0f));
  } else {
    uint32_t bits = fp8_detail::float_to_bits(magnitude);
    bits += 0x7FFFFu + ((bits >> 20) & 1u);  // round the 23-bit mantissa to 3 bits, ties to even
    code = (bits >> 20) - (120u << 3);
  }
  return static_cast<uint8_t>(sign | code);
}

// The scale of a row whose largest magnitude is amax: amax / 448 (0 when amax is 0).
SLUICE_HOST_DEVICE inline float fp8_e4m3_scale(float amax) {
  return amax > 0.0f ? amax / kFp8E4M3Max : 0.0f;
}

// The code of x in a row of the given amax: x * (448 / amax), encoded (0 when amax is 0).
SLUICE_HOST_DEVICE inline uint8_t fp8_e4m3_quantize(float x, float amax) {
  return amax > 0.0f ? float_to_fp8_e4m3(x * (kFp8E4M3Max / amax)) : uint8_t{0};
}

}  // namespace sluice
