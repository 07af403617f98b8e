#include "engine/core/dequantize.h"

#include <cassert>
#include <cstring>

#include "engine/core/dtype.h"
#include "engine/core/quant_blocks.h"

namespace sluice {

namespace {

using quant::kBlock32;
using quant::kBlockK;

// Calls fn(block, out) for each block of a row, out pointing at the block's first output. The
// block is copied out of the row first: rows sit at any byte offset of a memory map, where a
// reinterpret_cast'ed struct would be misaligned.
template <typename Block, int kElements, typename Fn>
void for_each_block(const void* src, float* dst, int64_t num_elements, Fn&& fn) {
  assert(num_elements % kElements == 0);  // callers validated the row length
  const auto* bytes = static_cast<const uint8_t*>(src);
  for (int64_t b = 0; b < num_elements / kElements; ++b) {
    Block block;
    std::memcpy(&block, bytes + static_cast<size_t>(b) * sizeof(Block), sizeof(Block));
    fn(block, dst + b * kElements);
  }
}

// The 16-bit element types: each value is a little-endian bit pattern widened by to_f32.
template <float (*to_f32)(uint16_t)>
void widen_16_bit(const void* src, float* dst, int64_t num_elements) {
  const auto* in = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < num_elements; ++i) {
    uint16_t bits;
    std::memcpy(&bits, in + 2 * i, 2);
    dst[i] = to_f32(bits);
  }
}

// The unsigned value of element j (0..31) of a Q4_0/Q4_1/Q5_0/Q5_1 block: the low nibbles of qs
// hold elements 0..15, the high nibbles 16..31; the Q5 types add bit j of the little-endian qh
// word as the fifth bit.
template <typename Block>
int legacy_value(const Block& block, int j) {
  int q = j < kBlock32 / 2 ? block.qs[j] & 0xF : block.qs[j - kBlock32 / 2] >> 4;
  if constexpr (requires { block.qh; }) {
    const uint32_t qh =
        static_cast<uint32_t>(block.qh[0]) | static_cast<uint32_t>(block.qh[1]) << 8 |
        static_cast<uint32_t>(block.qh[2]) << 16 | static_cast<uint32_t>(block.qh[3]) << 24;
    q |= static_cast<int>((qh >> j) & 1u) << 4;
  }
  return q;
}

// Q4_0 and Q5_0: x = d * (q - kOffset).
template <typename Block, int kOffset>
void widen_symmetric(const void* src, float* dst, int64_t num_elements) {
  for_each_block<Block, kBlock32>(src, dst, num_elements, [](const Block& block, float* out) {
    const float d = f16_to_f32(block.d);
    for (int j = 0; j < kBlock32; ++j)
      out[j] = d * static_cast<float>(legacy_value(block, j) - kOffset);
  });
}

// Q4_1 and Q5_1: x = d * q + m, rounded after the product and after the sum as ggml does.
template <typename Block>
void widen_affine(const void* src, float* dst, int64_t num_elements) {
  for_each_block<Block, kBlock32>(src, dst, num_elements, [](const Block& block, float* out) {
    const float d = f16_to_f32(block.d);
    const float m = f16_to_f32(block.m);
    for (int j = 0; j < kBlock32; ++j) {
      const float scaled = d * static_cast<float>(legacy_value(block, j));
      out[j] = scaled + m;
    }
  });
}

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K super-block. Bytes 0-3 hold
// scales 0-3 in their low six bits, bytes 4-7 mins 0-3; scales and mins 4-7 take their low four
// bits from bytes 8-11 (scale low nibble, min high nibble) and their top two bits from the top
// of bytes 0-3 (scales) and 4-7 (mins).
void scale_min_k4(const uint8_t (&scales)[quant::kScaleBytesK], int j, int& scale, int& min) {
  if (j < 4) {
    scale = scales[j] & 0x3F;
    min = scales[j + 4] & 0x3F;
  } else {
    scale = (scales[j + 4] & 0x0F) | ((scales[j - 4] >> 6) << 4);
    min = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

// The signed 6-bit scale of sub-block j (0..15) of a Q3_K super-block: its low four bits are
// nibble j of bytes 0-7 (low nibbles for 0-7, high nibbles for 8-15), its top two bits come from
// byte 8 + j % 4, bits 2 * (j / 4); the stored value is offset by 32.
int scale_k3(const uint8_t (&scales)[quant::kScaleBytesK], int j) {
  const int low = j < 8 ? scales[j] & 0x0F : scales[j - 8] >> 4;
  const int high = (scales[8 + j % 4] >> (2 * (j / 4))) & 0x03;
  return (low | high << 4) - 32;
}

// Q4_K and Q5_K: eight sub-blocks of 32, each with its own scale and min; sub-block s takes
// nibble s % 2 of qs[32 (s / 2) + l] and, for Q5_K (qh given), bit s of qh[l] as its fifth bit.
template <typename Block>
void widen_k4_block(const Block& block, const uint8_t* qh, float* out) {
  const float d = f16_to_f32(block.d);
  const float dmin = f16_to_f32(block.dmin);
  for (int sub = 0; sub < kBlockK / 32; ++sub) {
    int scale, min;
    scale_min_k4(block.scales, sub, scale, min);
    const float d1 = d * static_cast<float>(scale);
    const float m1 = dmin * static_cast<float>(min);
    const int shift = 4 * (sub % 2);
    for (int l = 0; l < 32; ++l) {
      int q = (block.qs[32 * (sub / 2) + l] >> shift) & 0xF;
      if (qh) q |= ((qh[l] >> sub) & 1) << 4;
      const float scaled = d1 * static_cast<float>(q);
      out[32 * sub + l] = scaled - m1;
    }
  }
}

}  // namespace

void dequantize_row_f32(const void* src, float* dst, int64_t num_elements) {
  std::memcpy(dst, src, static_cast<size_t>(num_elements) * sizeof(float));
}

void dequantize_row_f16(const void* src, float* dst, int64_t num_elements) {
  widen_16_bit<f16_to_f32>(src, dst, num_elements);
}

void dequantize_row_bf16(const void* src, float* dst, int64_t num_elements) {
  widen_16_bit<bf16_to_f32>(src, dst, num_elements);
}

void dequantize_row_q8_0(const void* src, float* dst, int64_t num_elements) {
  for_each_block<quant::BlockQ8_0, kBlock32>(src, dst, num_elements,
                                             [](const quant::BlockQ8_0& block, float* out) {
                                               const float d = f16_to_f32(block.d);
                                               for (int j = 0; j < kBlock32; ++j) {
                                                 out[j] = d * static_cast<float>(block.qs[j]);
                                               }
                                             });
}

void dequantize_row_q4_0(const void* src, float* dst, int64_t num_elements) {
  widen_symmetric<quant::BlockQ4_0, 8>(src, dst, num_elements);
}

void dequantize_row_q4_1(const void* src, float* dst, int64_t num_elements) {
  widen_affine<quant::BlockQ4_1>(src, dst, num_elements);
}

void dequantize_row_q5_0(const void* src, float* dst, int64_t num_elements) {
  widen_symmetric<quant::BlockQ5_0, 16>(src, dst, num_elements);
}

void dequantize_row_q5_1(const void* src, float* dst, int64_t num_elements) {
  widen_affine<quant::BlockQ5_1>(src, dst, num_elements);
}

// Q2_K and Q3_K share the 2-bit layout: element i of a super-block lies in half h = i / 128, at
// shift s = (i % 128) / 32 and lane l = i % 32, i.e. bits 2s of qs[32h + l].
void dequantize_row_q2_k(const void* src, float* dst, int64_t num_elements) {
  for_each_block<quant::BlockQ2_K, kBlockK>(
      src, dst, num_elements, [](const quant::BlockQ2_K& block, float* out) {
        const float d = f16_to_f32(block.d);
        const float dmin = f16_to_f32(block.dmin);
        for (int sub = 0; sub < kBlockK / 16; ++sub) {
          const float dl = d * static_cast<float>(block.scales[sub] & 0xF);
          const float ml = dmin * static_cast<float>(block.scales[sub] >> 4);
          const int half = sub / 8, shift = 2 * ((sub % 8) / 2), first_lane = 16 * (sub % 2);
          for (int l = 0; l < 16; ++l) {
            const int q = (block.qs[32 * half + first_lane + l] >> shift) & 3;
            const float scaled = dl * static_cast<float>(q);
            out[16 * sub + l] = scaled - ml;
          }
        }
      });
}

void dequantize_row_q3_k(const void* src, float* dst, int64_t num_elements) {
  for_each_block<quant::BlockQ3_K, kBlockK>(
      src, dst, num_elements, [](const quant::BlockQ3_K& block, float* out) {
        const float d = f16_to_f32(block.d);
        for (int sub = 0; sub < kBlockK / 16; ++sub) {
          const float dl = d * static_cast<float>(scale_k3(block.scales, sub));
          const int half = sub / 8, shift = 2 * ((sub % 8) / 2), first_lane = 16 * (sub % 2);
          for (int l = 0; l < 16; ++l) {
            const int i = 16 * sub + l, lane = first_lane + l;
            const int low = (block.qs[32 * half + lane] >> shift) & 3;
            // The third bit (bit i / 32 of hmask[lane]) is stored inverted: clear means -4.
            const bool high = (block.hmask[lane] >> (i / 32)) & 1;
            out[i] = dl * static_cast<float>(high ? low : low - 4);
          }
        }
      });
}

void dequantize_row_q4_k(const void* src, float* dst, int64_t num_elements) {
  for_each_block<quant::BlockQ4_K, kBlockK>(
      src, dst, num_elements,
      [](const quant::BlockQ4_K& block, float* out) { widen_k4_block(block, nullptr, out); });
}

void dequantize_row_q5_k(const void* src, float* dst, int64_t num_elements) {
  for_each_block<quant::BlockQ5_K, kBlockK>(
      src, dst, num_elements,
      [](const quant::BlockQ5_K& block, float* out) { widen_k4_block(block, block.qh, out); });
}

// Q6_K: element i lies in half h = i / 128 at r = i % 128; its low four bits are nibble r / 64
// of ql[64h + r % 64], its top two bits are bits 2 (r / 32) of qh[32h + r % 32].
void dequantize_row_q6_k(const void* src, float* dst, int64_t num_elements) {
  for_each_block<quant::BlockQ6_K, kBlockK>(
      src, dst, num_elements, [](const quant::BlockQ6_K& block, float* out) {
        const float d = f16_to_f32(block.d);
        for (int sub = 0; sub < kBlockK / 16; ++sub) {
          const float dl = d * static_cast<float>(block.scales[sub]);
          for (int l = 0; l < 16; ++l) {
            const int i = 16 * sub + l, half = i / 128, r = i % 128;
            const int low = (block.ql[64 * half + r % 64] >> (4 * (r / 64))) & 0xF;
            const int high = (block.qh[32 * half + r % 32] >> (2 * (r / 32))) & 3;
            out[i] = dl * static_cast<float>((low | high << 4) - 32);
          }
        }
      });
}

// MXFP4: x = value * scale, one rounding (ggml multiplies the int8 table value by the scale).
void dequantize_row_mxfp4(const void* src, float* dst, int64_t num_elements) {
  for_each_block<quant::BlockMXFP4, kBlock32>(
      src, dst, num_elements, [](const quant::BlockMXFP4& block, float* out) {
        const float d = quant::mxfp4_scale(block.e);
        for (int j = 0; j < kBlock32 / 2; ++j) {
          out[j] = static_cast<float>(quant::kMxfp4Values[block.qs[j] & 0xF]) * d;
          out[j + kBlock32 / 2] = static_cast<float>(quant::kMxfp4Values[block.qs[j] >> 4]) * d;
        }
      });
}

}  // namespace sluice
