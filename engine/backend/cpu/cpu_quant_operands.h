// The two operands of the quantized dot-product kernels (cpu_quant_dot.h), in the form the
// kernels read:
//
//  - QuantizedActivations: num_tokens fp32 rows quantized once per product (Q8_0/Q8_1/Q8_K, see
//    cpu_quantize_activations.h) and split into flat arrays: int8 values, one float scale per
//    block, the Q8_1 sums and the Q8_K sums of 16.
//  - UnpackedWeights: a few weight rows decoded from their GGUF blocks into int8 values centred
//    on zero ("q - 8" for Q4_0, "q - 32" for Q6_K, MXFP4's doubled FP4 values, ...) in element
//    order, the integer scale (and
//    min) of each 16 elements (K-quants), and the float scales. A row is unpacked once and then
//    used for every token of a tile, so the bit-fiddling of a format is paid once per row and
//    not once per (row, token).
//
// Both are padded with zeros to whole 64-element chunks (and their scale arrays to whole pairs
// of blocks), so the SIMD kernels never need a tail loop. The weights in memory stay in their
// GGUF blocks; only the rows of the current tile are unpacked.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>

#include "engine/backend/cpu/cpu_quantize_activations.h"
#include "engine/core/dtype.h"

namespace sluice {

// How a weight type's integer dot products turn into floats.
enum class QuantFamily : uint8_t {
  Block32,     // Q4_0, Q5_0, Q8_0, MXFP4: d_w * d_x * sum(w * a) per block of 32
  Block32Min,  // Q4_1, Q5_1: plus m_w * s_x per block
  Super256,    // Q3_K, Q6_K: d_w * d_x * sum_groups(scale * sum(w * a)) per super-block of 256
  Super256Min  // Q2_K, Q4_K, Q5_K: minus dmin_w * d_x * sum_groups(min * bsum)
};

// What the kernels need to know of a weight type: one row per type with quantized kernels.
struct QuantKernelTraits {
  DType dtype;
  QuantFamily family;
  ActivationBlockType activation;  // the blocks its activations are quantized to
  // Whether its centred values can be negative ("q - 8"); the types with a min (q * d + m) have
  // none, which lets the VNNI kernels take the weights as vpdpbusd's unsigned operand.
  bool has_negative_values;
};

// Returns the row of dtype, or nullptr when dtype has no quantized kernels.
const QuantKernelTraits* find_quant_kernel_traits(DType dtype);

// Returns true for the weight types with quantized kernels.
inline bool has_quant_kernels(DType dtype) {
  return find_quant_kernel_traits(dtype) != nullptr;
}

// The family / activation blocks of a type; throw Error naming the type when it has no kernels.
QuantFamily quant_family(DType dtype);
ActivationBlockType activation_block_type(DType dtype);

inline constexpr int kQuantChunk = 64;  // elements per SIMD chunk (one zmm of int8)

// A 64-byte aligned, zero-initialised array that keeps its storage when resized smaller.
template <typename T>
class AlignedArray {
 public:
  void resize(size_t n) {
    if (n > capacity_) {
      storage_.reset(new T[n + kAlignElements]());
      capacity_ = n;
    }
    const auto address = reinterpret_cast<uintptr_t>(storage_.get());
    data_ = storage_.get() + ((64 - address % 64) % 64) / sizeof(T);
    size_ = n;
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  static constexpr size_t kAlignElements = 64 / sizeof(T) + 1;
  std::unique_ptr<T[]> storage_;
  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

struct QuantizedActivations {
  ActivationBlockType type = ActivationBlockType::Q8_0;
  // Stored as q + 128 (read as uint8) where the kernel wants them so
  // (wants_offset_activations in cpu_quant_dot.h), else as q.
  bool is_offset_u8 = false;
  int64_t num_tokens = 0;
  int64_t cols = 0;
  int64_t qs_stride = 0;       // bytes per token: cols rounded up to kQuantChunk
  int64_t scale_stride = 0;    // floats per token: blocks rounded up to pairs
  AlignedArray<int8_t> qs;     // [num_tokens][qs_stride]
  AlignedArray<float> scale;   // [num_tokens][scale_stride] d of each block (32 or 256)
  AlignedArray<float> sum;     // Q8_1: [num_tokens][scale_stride] s of each block, as float
  AlignedArray<int16_t> bsum;  // Q8_K: [num_tokens][cols / 16] the sums of 16

  const int8_t* token_qs(int64_t t) const { return qs.data() + t * qs_stride; }
  const float* token_scale(int64_t t) const { return scale.data() + t * scale_stride; }
  const float* token_sum(int64_t t) const { return sum.data() + t * scale_stride; }
  const int16_t* token_bsum(int64_t t) const { return bsum.data() + t * (cols / 16); }
};

// Shapes out for activation rows of `cols` values quantized for weights of `dtype`.
// Precondition: cols is a multiple of the dtype's block.
void shape_activations(DType dtype, int64_t num_tokens, int64_t cols, bool is_offset_u8,
                       QuantizedActivations& out);

// Quantizes tokens [t_begin, t_end) of x[num_tokens, cols] into out (shaped by
// shape_activations). Tokens are independent, so callers may split the range across threads.
void quantize_activations(const float* x, int64_t t_begin, int64_t t_end,
                          QuantizedActivations& out);

// Shapes out as src for `count` tokens and copies token rows[i] of src into token i: rows that
// were quantized once, gathered for the products that read them (a mixture-of-experts layer's
// tokens, grouped by expert).
void gather_activations(const QuantizedActivations& src, const int32_t* rows, int64_t count,
                        QuantizedActivations& out);

// Stores already-quantized blocks (BlockQ8_0, BlockQ8_1 or BlockQ8_K, as out.type says) as token
// t of out.
void store_activation_blocks(const void* blocks, int64_t t, QuantizedActivations& out);

struct UnpackedWeights {
  DType dtype = DType::Q8_0;
  QuantFamily family = QuantFamily::Block32;
  int num_rows = 0;
  int64_t cols = 0;
  int64_t w_stride = 0;      // bytes per row: cols rounded up to kQuantChunk
  int64_t scale_stride = 0;  // floats per row, as in QuantizedActivations
  AlignedArray<int8_t> w;    // [num_rows][w_stride] centred values in element order
  // Super-block types: [num_rows][cols / 16] the integer scale of each 16 elements (Q4_K and
  // Q5_K's scales of 32 repeated).
  AlignedArray<int8_t> group_scale;
  AlignedArray<float> d;  // [num_rows][scale_stride] d of each block (32) or super-block (256)
  // Block32Min: m of each block; Super256Min: dmin of each super-block.
  AlignedArray<float> m;
  AlignedArray<int8_t> mins;  // Super256Min: [num_rows][cols / 16] the min of each 16 elements

  const int8_t* row_w(int r) const { return w.data() + r * w_stride; }
  const int8_t* row_group_scale(int r) const { return group_scale.data() + r * (cols / 16); }
  const float* row_d(int r) const { return d.data() + r * scale_stride; }
  const float* row_m(int r) const { return m.data() + r * scale_stride; }
  const int8_t* row_mins(int r) const { return mins.data() + r * (cols / 16); }
};

// Decodes num_rows rows of `dtype` (row r at rows + r * row_bytes, cols elements each) into out.
// Precondition: dtype is quantized and cols a multiple of its block.
void unpack_weight_rows(DType dtype, const uint8_t* rows, size_t row_bytes, int num_rows,
                        int64_t cols, UnpackedWeights& out);

// Four bytes b0 b1 b2 b3 -> eight: b0 b0 b1 b1 b2 b2 b3 b3 (a 32-element group's scale for each
// of its two 16-element halves).
inline uint64_t duplicate_bytes(uint32_t x) {
  uint64_t y = x;
  y = (y | y << 16) & 0x0000ffff0000ffffull;
  y = (y | y << 8) & 0x00ff00ff00ff00ffull;
  return y | y << 8;
}

// The eight 6-bit scales and mins of a Q4_K/Q5_K super-block (ggml's get_scale_min_k4 layout:
// groups 0-3 in the low 6 bits of bytes 0-3 (scales) and 4-7 (mins); groups 4-7 in the nibbles
// of bytes 8-11 with their top two bits in the top bits of bytes 0-3 and 4-7), one byte each:
// scales 0-3 and 4-7 in words 0-1, mins 0-3 and 4-7 in words 2-3.
inline void scales_mins_k4_bytes(const uint8_t* s, uint32_t (&words)[4]) {
  uint32_t a, b, c;
  std::memcpy(&a, s, 4);
  std::memcpy(&b, s + 4, 4);
  std::memcpy(&c, s + 8, 4);
  words[0] = a & 0x3f3f3f3fu;
  words[1] = (c & 0x0f0f0f0fu) | ((a >> 2) & 0x30303030u);
  words[2] = b & 0x3f3f3f3fu;
  words[3] = ((c >> 4) & 0x0f0f0f0fu) | ((b >> 2) & 0x30303030u);
}

// The same written once per 16 elements (each byte twice): 16 scales in words 0-1, 16 mins in
// words 2-3.
inline void scales_mins_k4_words(const uint8_t* s, uint64_t (&words)[4]) {
  uint32_t bytes[4];
  scales_mins_k4_bytes(s, bytes);
  for (int i = 0; i < 4; ++i) words[i] = duplicate_bytes(bytes[i]);
}

inline void unpack_scales_mins_k4(const uint8_t* s, int8_t* scales16, int8_t* mins16) {
  uint64_t words[4];
  scales_mins_k4_words(s, words);
  std::memcpy(scales16, &words[0], 8);
  std::memcpy(scales16 + 8, &words[1], 8);
  std::memcpy(mins16, &words[2], 8);
  std::memcpy(mins16 + 8, &words[3], 8);
}

}  // namespace sluice
