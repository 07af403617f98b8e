// The CPU kernel emulator's stand-in for <cuda_bf16.h>: bfloat16 as the high 16 bits of a float.
#pragma once

#include "cuda_runtime.h"

struct __nv_bfloat16 {
  unsigned short x_;
};
struct __nv_bfloat162 {
  __nv_bfloat16 x, y;
};

inline float __bfloat162float(__nv_bfloat16 b) {
  return std::bit_cast<float>(static_cast<unsigned int>(b.x_) << 16);
}
// Round to nearest even; NaN becomes the canonical 0x7fff, as in CUDA's header.
inline __nv_bfloat16 __float2bfloat16_rn(float x) {
  const unsigned int bits = std::bit_cast<unsigned int>(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return __nv_bfloat16{0x7fff};
  const unsigned int rounding = 0x7fffu + ((bits >> 16) & 1u);
  return __nv_bfloat16{static_cast<unsigned short>((bits + rounding) >> 16)};
}
inline __nv_bfloat16 __float2bfloat16(float x) {
  return __float2bfloat16_rn(x);
}
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return __nv_bfloat162{__float2bfloat16_rn(a), __float2bfloat16_rn(b)};
}
