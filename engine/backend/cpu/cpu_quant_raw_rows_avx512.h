// Where the AVX-512 VNNI kernels' weight rows come from (cpu_quant_dot_avx512.cpp's tiles and
// cpu_quant_panel_avx512.cpp's panels). Internal to those two files.
#pragma once

#include "engine/backend/cpu/cpu_quant_dot_simd.h"
#include "engine/core/quant_blocks.h"

#if SLUICE_QUANT_X86

namespace sluice {

// A named namespace, not an anonymous one: see cpu_quant_dot_avx512.cpp.
namespace avx512_vnni_kernels {

// ---- Weight sources: where a tile's weight rows come from. Each gives a kernel the same
// 64-byte chunks of centred values and the same scales, so a kernel's bits do not depend on the
// source: rows unpacked into UnpackedWeights (any type, any tile), or rows decoded in registers
// straight from their GGUF blocks (the direct path of quant_direct_tile, for few tokens, where
// unpacking a row costs more than the products that use it).

template <int kRows>
struct UnpackedRows {
  QuantRowPointers<kRows> p;

  SLUICE_AVX512_VNNI_INLINE void prefetch(int64_t, int64_t) const {}  // the rows are in L1/L2

  // Blocks of 32: chunk c is blocks 2c and 2c + 1.
  SLUICE_AVX512_VNNI_INLINE __m512i chunk(int r, int64_t c) const {
    return _mm512_load_si512(p.w[r] + c * kQuantChunk);
  }
  SLUICE_AVX512_VNNI_INLINE float d_block(int r, int64_t b) const { return p.d[r][b]; }
  SLUICE_AVX512_VNNI_INLINE float m_block(int r, int64_t b) const { return p.m[r][b]; }
  // Super-blocks of 256.
  SLUICE_AVX512_VNNI_INLINE void begin(int, int64_t) {}
  SLUICE_AVX512_VNNI_INLINE __m128i group_scales(int r, int64_t sb) const {
    return _mm_load_si128(reinterpret_cast<const __m128i*>(p.group_scale[r] + sb * 16));
  }
  SLUICE_AVX512_VNNI_INLINE __m128i mins(int r, int64_t sb) const {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p.mins[r] + sb * 16));
  }
  SLUICE_AVX512_VNNI_INLINE float d(int r, int64_t sb) const { return p.d[r][sb]; }
  SLUICE_AVX512_VNNI_INLINE float m(int r, int64_t sb) const { return p.m[r][sb]; }
  SLUICE_AVX512_VNNI_INLINE __m512i chunk(int r, int64_t sb, int c) const {
    return _mm512_load_si512(p.w[r] + sb * quant::kBlockK + c * kQuantChunk);
  }
};

SLUICE_AVX512_VNNI_INLINE __m512i join(__m256i low, __m256i high) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
}

// Q8_0 rows: the values as stored; a row of an odd number of blocks ends in a half chunk whose
// second block is zero values with a zero scale, as unpack_weight_rows pads it.
template <int kRows>
struct RawQ8_0Rows : NextTilePrefetch {
  const quant::BlockQ8_0* blocks[kRows];
  int64_t num_blocks;

  SLUICE_AVX512_VNNI_INLINE __m512i chunk(int r, int64_t c) const {
    const quant::BlockQ8_0* b = blocks[r] + 2 * c;
    return join(loadu32(b[0].qs),
                2 * c + 1 < num_blocks ? loadu32(b[1].qs) : _mm256_setzero_si256());
  }
  // The padding block past an odd number of blocks has a zero scale.
  SLUICE_AVX512_VNNI_INLINE float d_block(int r, int64_t b) const {
    return b < num_blocks ? _cvtsh_ss(blocks[r][b].d) : 0.0f;
  }
  SLUICE_AVX512_VNNI_INLINE float m_block(int, int64_t) const { return 0.0f; }
};

// Q4_K and Q5_K rows: chunk c is the low nibbles of qs[32c..32c+31], then the high ones (Q5_K:
// plus bit 2c, 2c + 1 of qh[l] as the fifth bit); the scales and mins of a super-block are
// decoded once by begin().
template <typename Block, bool kHasHighBit, int kRows>
struct RawQ45KRows : NextTilePrefetch {
  const Block* blocks[kRows];
  __m128i scales[kRows];
  __m128i min_values[kRows];
  float d_value[kRows];
  float m_value[kRows];

  SLUICE_AVX512_VNNI_INLINE void begin(int r, int64_t sb) {
    const Block& b = blocks[r][sb];
    uint64_t words[4];
    scales_mins_k4_words(b.scales, words);
    scales[r] = _mm_set_epi64x(static_cast<int64_t>(words[1]), static_cast<int64_t>(words[0]));
    min_values[r] = _mm_set_epi64x(static_cast<int64_t>(words[3]), static_cast<int64_t>(words[2]));
    d_value[r] = _cvtsh_ss(b.d);  // exact, as half_to_float
    m_value[r] = _cvtsh_ss(b.dmin);
  }
  SLUICE_AVX512_VNNI_INLINE __m128i group_scales(int r, int64_t) const { return scales[r]; }
  SLUICE_AVX512_VNNI_INLINE __m128i mins(int r, int64_t) const { return min_values[r]; }
  SLUICE_AVX512_VNNI_INLINE float d(int r, int64_t) const { return d_value[r]; }
  SLUICE_AVX512_VNNI_INLINE float m(int r, int64_t) const { return m_value[r]; }
  SLUICE_AVX512_VNNI_INLINE __m512i chunk(int r, int64_t sb, int c) const {
    const Block& b = blocks[r][sb];
    const __m256i q = loadu32(b.qs + 32 * c);
    __m256i low = byte_bits(q, 0, 0x0f);
    __m256i high = byte_bits(q, 4, 0x0f);
    if constexpr (kHasHighBit) {
      const __m256i qh = loadu32(b.qh);
      low = _mm256_or_si256(low, _mm256_slli_epi16(byte_bits(qh, 2 * c, 1), 4));
      high = _mm256_or_si256(high, _mm256_slli_epi16(byte_bits(qh, 2 * c + 1, 1), 4));
    }
    return join(low, high);
  }
};

// Q6_K rows: half h of a super-block is chunks 2h (ql low nibbles with qh bits 0-1, 2-3) and
// 2h + 1 (high nibbles with bits 4-5, 6-7), less 32.
template <int kRows>
struct RawQ6KRows : NextTilePrefetch {
  const quant::BlockQ6_K* blocks[kRows];
  float d_value[kRows];

  SLUICE_AVX512_VNNI_INLINE void begin(int r, int64_t sb) {
    d_value[r] = _cvtsh_ss(blocks[r][sb].d);
  }
  SLUICE_AVX512_VNNI_INLINE __m128i group_scales(int r, int64_t sb) const {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks[r][sb].scales));
  }
  SLUICE_AVX512_VNNI_INLINE __m128i mins(int, int64_t) const { return _mm_setzero_si128(); }
  SLUICE_AVX512_VNNI_INLINE float d(int r, int64_t) const { return d_value[r]; }
  SLUICE_AVX512_VNNI_INLINE float m(int, int64_t) const { return 0.0f; }
  SLUICE_AVX512_VNNI_INLINE __m512i chunk(int r, int64_t sb, int c) const {
    const quant::BlockQ6_K& b = blocks[r][sb];
    const int half = c / 2;
    const int shift = 4 * (c % 2);
    const __m256i qh = loadu32(b.qh + 32 * half);
    const __m256i ql0 = loadu32(b.ql + 64 * half);
    const __m256i ql1 = loadu32(b.ql + 64 * half + 32);
    const __m256i bias = _mm256_set1_epi8(32);
    const __m256i low =
        _mm256_or_si256(byte_bits(ql0, shift, 0x0f), _mm256_slli_epi16(byte_bits(qh, shift, 3), 4));
    const __m256i high = _mm256_or_si256(byte_bits(ql1, shift, 0x0f),
                                         _mm256_slli_epi16(byte_bits(qh, shift + 2, 3), 4));
    return join(_mm256_sub_epi8(low, bias), _mm256_sub_epi8(high, bias));
  }
};

}  // namespace avx512_vnni_kernels

}  // namespace sluice

#endif  // SLUICE_QUANT_X86
