#include "engine/core/dtype.h"

#include <cmath>
#include <iterator>

#include "engine/core/dequantize.h"
#include "engine/core/quant_blocks.h"

namespace sluice {

namespace {

// name, ggml type id, elements and bytes per block (the layouts of quant_blocks.h), quantized,
// widening to fp32.
constexpr DTypeTraits kTraits[] = {
    {DType::F32, "F32", 0, 1, 4, false, dequantize_row_f32},
    {DType::F16, "F16", 1, 1, 2, false, dequantize_row_f16},
    {DType::BF16, "BF16", 30, 1, 2, false, dequantize_row_bf16},
    {DType::Q8_0, "Q8_0", 8, quant::kBlock32, sizeof(quant::BlockQ8_0), true, dequantize_row_q8_0},
    {DType::Q4_0, "Q4_0", 2, quant::kBlock32, sizeof(quant::BlockQ4_0), true, dequantize_row_q4_0},
    {DType::Q4_1, "Q4_1", 3, quant::kBlock32, sizeof(quant::BlockQ4_1), true, dequantize_row_q4_1},
    {DType::Q5_0, "Q5_0", 6, quant::kBlock32, sizeof(quant::BlockQ5_0), true, dequantize_row_q5_0},
    {DType::Q5_1, "Q5_1", 7, quant::kBlock32, sizeof(quant::BlockQ5_1), true, dequantize_row_q5_1},
    {DType::Q2_K, "Q2_K", 10, quant::kBlockK, sizeof(quant::BlockQ2_K), true, dequantize_row_q2_k},
    {DType::Q3_K, "Q3_K", 11, quant::kBlockK, sizeof(quant::BlockQ3_K), true, dequantize_row_q3_k},
    {DType::Q4_K, "Q4_K", 12, quant::kBlockK, sizeof(quant::BlockQ4_K), true, dequantize_row_q4_k},
    {DType::Q5_K, "Q5_K", 13, quant::kBlockK, sizeof(quant::BlockQ5_K), true, dequantize_row_q5_k},
    {DType::Q6_K, "Q6_K", 14, quant::kBlockK, sizeof(quant::BlockQ6_K), true, dequantize_row_q6_k},
    {DType::MXFP4, "MXFP4", 39, quant::kBlock32, sizeof(quant::BlockMXFP4), true,
     dequantize_row_mxfp4},
};

constexpr bool table_is_in_enum_order() {
  for (size_t i = 0; i < std::size(kTraits); ++i) {
    if (static_cast<size_t>(kTraits[i].dtype) != i) return false;
  }
  return true;
}
static_assert(table_is_in_enum_order());

}  // namespace

const DTypeTraits& dtype_traits(DType dtype) {
  return kTraits[static_cast<size_t>(dtype)];
}

std::span<const DTypeTraits> all_dtype_traits() {
  return kTraits;
}

const DTypeTraits* find_dtype_by_ggml_type(uint32_t ggml_type) {
  for (const DTypeTraits& traits : kTraits) {
    if (traits.ggml_type == ggml_type) return &traits;
  }
  return nullptr;
}

std::string dtype_names() {
  std::string out;
  for (const DTypeTraits& traits : kTraits)
    out += (out.empty() ? "" : ", ") + std::string(traits.name);
  return out;
}

std::string_view dtype_name(DType dtype) {
  return dtype_traits(dtype).name;
}

size_t dtype_num_bytes(DType dtype, int64_t num_elements) {
  const DTypeTraits& t = dtype_traits(dtype);
  return static_cast<size_t>(num_elements / t.block_elements) * t.block_bytes;
}

bool dtype_row_is_valid(DType dtype, int64_t num_elements) {
  return num_elements % dtype_traits(dtype).block_elements == 0;
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

}  // namespace sluice
