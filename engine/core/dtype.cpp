#include "engine/core/dtype.h"

#include <cassert>
#include <cmath>

namespace sluice {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return "F32";
    case DType::F16:
      return "F16";
    case DType::BF16:
      return "BF16";
    case DType::Q8_0:
      return "Q8_0";
  }
  return "?";
}

size_t dtype_num_bytes(DType dtype, int64_t num_elements) {
  const auto n = static_cast<size_t>(num_elements);
  switch (dtype) {
    case DType::F32:
      return n * 4;
    case DType::F16:
    case DType::BF16:
      return n * 2;
    case DType::Q8_0:
      return n / kQ8_0BlockSize * kQ8_0BlockBytes;
  }
  return 0;
}

bool dtype_row_is_valid(DType dtype, int64_t num_elements) {
  return dtype != DType::Q8_0 || num_elements % kQ8_0BlockSize == 0;
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalise into a float exponent
      int shift = 0;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        ++shift;
      }
      mantissa &= 0x3ffu;
      bits = sign | static_cast<uint32_t>(127 - 15 + 1 - shift) << 23 | mantissa << 13;
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | mantissa << 13;
  } else {
    bits = sign | (exponent + (127 - 15)) << 23 | mantissa << 13;
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t f32_to_f16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (abs_bits >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: inf
  if (abs_bits < 0x38800000u) {                        // below the smallest normal half
    // Subnormal half: value = m * 2^-24; round the scaled value to nearest even.
    const float scaled = std::fabs(f) * 16777216.0f;  // 2^24, exact
    const float rounded = std::nearbyint(scaled);     // default rounding mode: nearest even
    return sign | static_cast<uint16_t>(rounded);
  }
  uint32_t half = ((abs_bits >> 13) - ((127 - 15) << 10));
  const uint32_t remainder = abs_bits & 0x1fffu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;
  return sign | static_cast<uint16_t>(half);
}

void dequantize_row(DType dtype, const void* src, float* dst, int64_t num_elements) {
  switch (dtype) {
    case DType::F32:
      std::memcpy(dst, src, static_cast<size_t>(num_elements) * 4);
      return;
    case DType::F16: {
      const auto* in = static_cast<const uint8_t*>(src);
      for (int64_t i = 0; i < num_elements; ++i) {
        uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        dst[i] = f16_to_f32(h);
      }
      return;
    }
    case DType::BF16: {
      const auto* in = static_cast<const uint8_t*>(src);
      for (int64_t i = 0; i < num_elements; ++i) {
        uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        dst[i] = bf16_to_f32(h);
      }
      return;
    }
    case DType::Q8_0: {
      assert(num_elements % kQ8_0BlockSize == 0);  // callers validated the row length
      const auto* block = static_cast<const uint8_t*>(src);
      for (int64_t b = 0; b < num_elements / kQ8_0BlockSize; ++b, block += kQ8_0BlockBytes) {
        uint16_t scale_bits;
        std::memcpy(&scale_bits, block, 2);
        const float scale = f16_to_f32(scale_bits);
        const auto* q = reinterpret_cast<const int8_t*>(block + 2);
        for (int i = 0; i < kQ8_0BlockSize; ++i) dst[b * kQ8_0BlockSize + i] = scale * q[i];
      }
      return;
    }
  }
}

}  // namespace sluice
