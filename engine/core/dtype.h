// Element types of model weights and the conversions between them. Compute is fp32 on the CPU;
// weights keep their stored type and are widened row by row where they are used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace sluice {

// The stored element types Sluice computes with. The quantized ones are GGUF's block formats
// (engine/core/quant_blocks.h); MXFP4 is gpt-oss's expert format (OCP microscaling FP4).
enum class DType : uint8_t {
  F32,
  F16,
  BF16,
  Q8_0,
  Q4_0,
  Q4_1,
  Q5_0,
  Q5_1,
  Q2_K,
  Q3_K,
  Q4_K,
  Q5_K,
  Q6_K,
  MXFP4
};

// Widens num_elements values stored in one type at src to fp32 at dst. Precondition:
// num_elements is a multiple of the type's block_elements and src starts at a block (any byte
// alignment).
using DequantizeRowFn = void (*)(const void* src, float* dst, int64_t num_elements);

// What every part of Sluice needs to know of a type: one row per DType (dtype_traits()).
struct DTypeTraits {
  DType dtype;
  const char* name;        // "Q4_K", as GGUF and llama.cpp spell it
  uint32_t ggml_type;      // the type id in a GGUF tensor header
  int64_t block_elements;  // 1 for the float types
  size_t block_bytes;
  bool quantized;
  DequantizeRowFn dequantize_row;  // engine/core/dequantize.h
};

const DTypeTraits& dtype_traits(DType dtype);
// All rows of the table, in enum order.
std::span<const DTypeTraits> all_dtype_traits();

// Returns the row whose ggml_type is ggml_type, or nullptr when Sluice has no such DType.
const DTypeTraits* find_dtype_by_ggml_type(uint32_t ggml_type);

// Returns every type's name in enum order, comma-separated ("F32, F16, BF16, Q8_0, ..."), for
// messages that list what is supported.
std::string dtype_names();

// Q8_0 (GGUF): blocks of 32 weights, each block an fp16 scale followed by 32 int8 values.
inline constexpr int kQ8_0BlockSize = 32;
inline constexpr int kQ8_0BlockBytes = 2 + kQ8_0BlockSize;

// Returns the type's name, e.g. "F32" or "Q4_K".
std::string_view dtype_name(DType dtype);

// Returns the bytes that num_elements values of dtype occupy. Precondition for block types:
// num_elements is a multiple of the block (callers validate this and report the tensor first).
size_t dtype_num_bytes(DType dtype, int64_t num_elements);

// Returns true when a row of num_elements values can be stored in dtype (block types need
// whole blocks).
bool dtype_row_is_valid(DType dtype, int64_t num_elements);

inline float bf16_to_f32(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Rounds to nearest even, as PyTorch does; NaN stays NaN.
inline uint16_t f32_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// IEEE 754 half precision to single precision, exact for every input (subnormals, inf, NaN).
float f16_to_f32(uint16_t h);

// IEEE half to single precision for every input (normals, subnormals, inf, NaN), branch-free so
// that loops over many halves vectorise (the CPU kernels' unpacking and portable widening);
// the same values as f16_to_f32.
inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t magnitude = h & 0x7fffu;
  // The half's exponent and mantissa read as a float with a 2^-112 bias: scaling by 2^112 is
  // exact and turns half subnormals into float normals.
  uint32_t bits = magnitude << 13;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  f *= 0x1p112f;
  std::memcpy(&bits, &f, sizeof bits);
  if (magnitude >= 0x7c00u) bits = 0x7f800000u | (magnitude & 0x3ffu) << 13;  // inf, NaN
  bits |= sign;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Single to half precision with round-to-nearest-even; overflow gives inf.
uint16_t f32_to_f16(float f);

// Widens num_elements values of dtype at src into dst, bit for bit as ggml's to_float does.
// Precondition: num_elements is a multiple of the type's block and src starts at a block.
inline void dequantize_row(DType dtype, const void* src, float* dst, int64_t num_elements) {
  dtype_traits(dtype).dequantize_row(src, dst, num_elements);
}

}  // namespace sluice
