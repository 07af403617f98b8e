// Where the AVX2 kernels' weight rows come from (cpu_quant_dot_avx2.cpp). Internal to that file.
//
// Each source gives a kernel the same 32-byte pieces of centred values and the same scales, so a
// kernel's bits do not depend on the source: rows unpacked into UnpackedWeights (any type, any
// tile), or rows decoded in registers straight from their GGUF blocks (the direct path of
// quant_direct_tile, for few tokens, where unpacking a row costs more than the products that
// use it). Blocks of 32: block(r, b) is block b of row r. Super-blocks of 256: part(r, sb, p) is
// elements 32p..32p+31 of super-block sb, in element order as unpack_weight_rows writes them.
#pragma once

#include "engine/backend/cpu/cpu_quant_dot_simd.h"
#include "engine/core/quant_blocks.h"

#if SLUICE_QUANT_X86

namespace sluice {

// A named namespace, not an anonymous one: see cpu_quant_dot_avx2.cpp.
namespace avx2_kernels {

template <int kRows>
struct UnpackedRows {
  QuantRowPointers<kRows> p;

  SLUICE_AVX2_INLINE void prefetch(int64_t, int64_t) const {}  // the rows are in L1/L2
  // Blocks of 32.
  SLUICE_AVX2_INLINE __m256i block(int r, int64_t b) const {
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(p.w[r] + b * quant::kBlock32));
  }
  SLUICE_AVX2_INLINE float d_block(int r, int64_t b) const { return p.d[r][b]; }
  SLUICE_AVX2_INLINE float m_block(int r, int64_t b) const { return p.m[r][b]; }
  // Super-blocks of 256.
  SLUICE_AVX2_INLINE void begin(int, int64_t) {}
  SLUICE_AVX2_INLINE __m128i group_scales(int r, int64_t sb) const {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p.group_scale[r] + sb * 16));
  }
  SLUICE_AVX2_INLINE __m128i mins(int r, int64_t sb) const {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p.mins[r] + sb * 16));
  }
  SLUICE_AVX2_INLINE float d(int r, int64_t sb) const { return p.d[r][sb]; }
  SLUICE_AVX2_INLINE float m(int r, int64_t sb) const { return p.m[r][sb]; }
  SLUICE_AVX2_INLINE __m256i part(int r, int64_t sb, int part) const {
    return _mm256_load_si256(
        reinterpret_cast<const __m256i*>(p.w[r] + sb * quant::kBlockK + 32 * part));
  }
};

// Q8_0 rows: the values as stored. Rows are walked in whole pairs of blocks, as unpacked rows
// are: the block past an odd number of blocks is zero values with a zero scale.
template <int kRows>
struct RawQ8_0Rows : NextTilePrefetch {
  const quant::BlockQ8_0* blocks[kRows];
  int64_t num_blocks;

  SLUICE_AVX2_INLINE __m256i block(int r, int64_t b) const {
    return b < num_blocks ? loadu32(blocks[r][b].qs) : _mm256_setzero_si256();
  }
  SLUICE_AVX2_INLINE float d_block(int r, int64_t b) const {
    return b < num_blocks ? _cvtsh_ss(blocks[r][b].d) : 0.0f;  // exact, as half_to_float
  }
  SLUICE_AVX2_INLINE float m_block(int, int64_t) const { return 0.0f; }
};

// Q4_K and Q5_K rows: part 2c + h is the low (h = 0) or high (h = 1) nibbles of
// qs[32c..32c+31] (Q5_K: plus bit 2c + h of qh[0..31] as the fifth bit); the scales and mins of a
// super-block are decoded once by begin().
template <typename Block, bool kHasHighBit, int kRows>
struct RawQ45KRows : NextTilePrefetch {
  const Block* blocks[kRows];
  __m128i scales[kRows];
  __m128i min_values[kRows];
  float d_value[kRows];
  float m_value[kRows];

  // The eight scales and mins (scales_mins_k4_bytes), each byte doubled into the scales of its
  // two groups of 16.
  SLUICE_AVX2_INLINE void begin(int r, int64_t sb) {
    const Block& b = blocks[r][sb];
    uint32_t bytes[4];
    scales_mins_k4_bytes(b.scales, bytes);
    // (set from registers: a 16-byte load of the four words just stored would wait on store
    // forwarding every super-block)
    const __m128i v = _mm_setr_epi32(static_cast<int>(bytes[0]), static_cast<int>(bytes[1]),
                                     static_cast<int>(bytes[2]), static_cast<int>(bytes[3]));
    scales[r] = _mm_unpacklo_epi8(v, v);
    min_values[r] = _mm_unpackhi_epi8(v, v);
    d_value[r] = _cvtsh_ss(b.d);
    m_value[r] = _cvtsh_ss(b.dmin);
  }
  SLUICE_AVX2_INLINE __m128i group_scales(int r, int64_t) const { return scales[r]; }
  SLUICE_AVX2_INLINE __m128i mins(int r, int64_t) const { return min_values[r]; }
  SLUICE_AVX2_INLINE float d(int r, int64_t) const { return d_value[r]; }
  SLUICE_AVX2_INLINE float m(int r, int64_t) const { return m_value[r]; }
  SLUICE_AVX2_INLINE __m256i part(int r, int64_t sb, int part) const {
    const Block& b = blocks[r][sb];
    __m256i v = byte_bits(loadu32(b.qs + 32 * (part / 2)), 4 * (part % 2), 0x0f);
    if constexpr (kHasHighBit)
      v = _mm256_or_si256(v, _mm256_slli_epi16(byte_bits(loadu32(b.qh), part, 1), 4));
    return v;
  }
};

// Q6_K rows: part p of a super-block is in half p / 4 (ql[64 * half ..], qh[32 * half ..]):
// ql bytes 32 * (p % 2) onwards, their low (p % 4 < 2) or high nibbles, with bits 2 * (p % 4)
// and up of qh as bits 4-5, less 32.
template <int kRows>
struct RawQ6KRows : NextTilePrefetch {
  const quant::BlockQ6_K* blocks[kRows];
  float d_value[kRows];

  SLUICE_AVX2_INLINE void begin(int r, int64_t sb) { d_value[r] = _cvtsh_ss(blocks[r][sb].d); }
  SLUICE_AVX2_INLINE __m128i group_scales(int r, int64_t sb) const {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks[r][sb].scales));
  }
  SLUICE_AVX2_INLINE __m128i mins(int, int64_t) const { return _mm_setzero_si128(); }
  SLUICE_AVX2_INLINE float d(int r, int64_t) const { return d_value[r]; }
  SLUICE_AVX2_INLINE float m(int, int64_t) const { return 0.0f; }
  SLUICE_AVX2_INLINE __m256i part(int r, int64_t sb, int part) const {
    const quant::BlockQ6_K& b = blocks[r][sb];
    const int half = part / 4, j = part % 4;
    const __m256i ql = loadu32(b.ql + 64 * half + 32 * (j % 2));
    const __m256i qh = loadu32(b.qh + 32 * half);
    const __m256i v = _mm256_or_si256(byte_bits(ql, 4 * (j / 2), 0x0f),
                                      _mm256_slli_epi16(byte_bits(qh, 2 * j, 3), 4));
    return _mm256_sub_epi8(v, _mm256_set1_epi8(32));
  }
};

}  // namespace avx2_kernels

}  // namespace sluice

#endif  // SLUICE_QUANT_X86
