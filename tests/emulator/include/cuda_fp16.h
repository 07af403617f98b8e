// The CPU kernel emulator's stand-in for <cuda_fp16.h>: IEEE half as its bits, converted through
// the compiler's _Float16 (round to nearest even, as __float2half_rn).
#pragma once

#include <cstring>

#include "cuda_runtime.h"

struct __half {
  unsigned short x_;
};
struct __half2 {
  __half x, y;
};

inline float __half2float(__half h) {
  _Float16 f;
  std::memcpy(&f, &h, sizeof f);
  return static_cast<float>(f);
}
inline __half __float2half_rn(float x) {
  if (std::isnan(x)) return __half{0x7fff};  // the canonical NaN CUDA gives
  const _Float16 f = static_cast<_Float16>(x);
  __half h;
  std::memcpy(&h, &f, sizeof h);
  return h;
}
inline __half __float2half(float x) {
  return __float2half_rn(x);
}
inline __half __ushort_as_half(unsigned short bits) {
  return __half{bits};
}
inline unsigned short __half_as_ushort(__half h) {
  return h.x_;
}
inline __half2 __floats2half2_rn(float a, float b) {
  return __half2{__float2half_rn(a), __float2half_rn(b)};
}
inline float2 __half22float2(__half2 h) {
  return float2{__half2float(h.x), __half2float(h.y)};
}
