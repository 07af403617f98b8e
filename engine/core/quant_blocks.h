// The block layouts of GGUF's quantized weight types (ggml's on-disk format, little-endian), as
// plain structs that alias the bytes of a memory-mapped tensor. A row of n weights is n / kBlock
// consecutive blocks. `d` and `dmin` are IEEE half-precision bit patterns (f16_to_f32).
//
// Element order inside a block follows ggml exactly; dequantization (dequantize.cpp) and the
// quantized dot products (engine/backend/cpu/cpu_quant_*) are the only code that interprets them.
#pragma once

#include <cstdint>
#include <cstring>

namespace sluice::quant {

// Elements per block of the legacy types (Q4_0 ... Q8_1) and MXFP4.
inline constexpr int kBlock32 = 32;
inline constexpr int kBlockK = 256;  // elements per super-block of the K-quants (QK_K)
inline constexpr int kScaleBytesK = 12;

// x = (q - 8) * d; qs[j] holds element j (low nibble) and element j + 16 (high nibble).
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kBlock32 / 2];
};
// x = q * d + m.
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kBlock32 / 2];
};
// x = (q - 16) * d; bit j of qh (little-endian uint32) is the fifth bit of element j.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kBlock32 / 2];
};
// x = q * d + m, fifth bits as in Q5_0.
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kBlock32 / 2];
};
// x = q * d.
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kBlock32];
};
// MXFP4 (OCP microscaling FP4, gpt-oss's experts): x = kMxfp4Values[q] * 2^(e - 128), e an E8M0
// exponent (mxfp4_scale); q as in Q4_0 (qs[j]: element j low, element j + 16 high nibble).
struct BlockMXFP4 {
  uint8_t e;
  uint8_t qs[kBlock32 / 2];
};
// The FP4 E2M1 values doubled, so that they are integers (hence 2^(e - 128), not 2^(e - 127)):
// bit 3 is the sign, 0b1000 is -0 and reads 0.
inline constexpr int8_t kMxfp4Values[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                            0, -1, -2, -3, -4, -6, -8, -12};

// 2^(e - 128), the scale of an MXFP4 block, as ggml's GGML_E8M0_TO_FP32_HALF computes it: the
// float with exponent field e - 1 for e >= 2, the subnormals 2^-128 and 2^-127 (bits 0x00200000
// << e) for e = 0 and 1. No NaN: e = 255 gives 2^127 (the OCP format's NaN is not special here).
inline float mxfp4_scale(uint8_t e) {
  const uint32_t bits = e < 2 ? uint32_t{0x00200000} << e : static_cast<uint32_t>(e - 1) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Activations for Q4_1/Q5_1 products: s = d * sum(qs) (stored as half).
struct BlockQ8_1 {
  uint16_t d;
  uint16_t s;
  int8_t qs[kBlock32];
};
// 16 sub-blocks of 16: scales[i] low nibble = scale, high nibble = min (times d / dmin);
// qs: 2 bits per weight.
struct BlockQ2_K {
  uint8_t scales[kBlockK / 16];
  uint8_t qs[kBlockK / 4];
  uint16_t d;
  uint16_t dmin;
};
// 16 sub-blocks of 16 with 6-bit signed scales packed in 12 bytes; 2 low bits in qs, the
// third (inverted: set means no -4) in hmask.
struct BlockQ3_K {
  uint8_t hmask[kBlockK / 8];
  uint8_t qs[kBlockK / 4];
  uint8_t scales[kScaleBytesK];
  uint16_t d;
};
// 8 sub-blocks of 32 with 6-bit scales and mins packed in 12 bytes; 4 bits per weight.
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kScaleBytesK];
  uint8_t qs[kBlockK / 2];
};
// As Q4_K plus a fifth bit per weight in qh.
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kScaleBytesK];
  uint8_t qh[kBlockK / 8];
  uint8_t qs[kBlockK / 2];
};
// 16 sub-blocks of 16 with int8 scales; 4 low bits in ql, 2 high bits in qh; x = d*scale*(q-32).
struct BlockQ6_K {
  uint8_t ql[kBlockK / 2];
  uint8_t qh[kBlockK / 4];
  int8_t scales[kBlockK / 16];
  uint16_t d;
};
// Activations for K-quant products: float scale, int8 values, sums of each group of 16.
struct BlockQ8_K {
  float d;
  int8_t qs[kBlockK];
  int16_t bsums[kBlockK / 16];
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);
static_assert(sizeof(BlockMXFP4) == 17);

}  // namespace sluice::quant
