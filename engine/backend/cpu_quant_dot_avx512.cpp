// The AVX-512 VNNI version of the quantized dot-product tiles (cpu_quant_dot.h gives the order
// of operations; cpu_quant_dot.cpp's scalar version is its definition). vpdpbusd multiplies
// unsigned by signed bytes: weights with a min (never negative) are the unsigned operand; for
// the others the activations arrive as q + 128 and each weight chunk's 128 * sum(w) is taken off
// again. Weights and activations of a chunk are loaded once and used for every (row, token)
// pair of the tile.
#include "engine/backend/cpu_quant_dot_simd.h"

#include <cstring>
#include <type_traits>

#include "engine/core/quant_blocks.h"

#if SLUICE_QUANT_X86

namespace sluice {

// A named namespace, not an anonymous one: the kernels instantiate the shared dispatch
// templates (cpu_quant_dot_simd.h), and GCC gives those instantiations the same mangled name in
// both SIMD files when the kernels live in anonymous namespaces, so an unoptimised build linked
// the AVX2 kernels into the AVX-512 entry point.
namespace avx512_vnni_kernels {

// Lane 8h + p = the sum of the eight lanes of half h of v[p] (exact integer sums, so any
// order): each 64-element chunk's two blocks of 32, for the eight pairs of a tile at once.
SLUICE_AVX512_VNNI_INLINE __m512i sum_half_lanes8(const __m512i* v) {
  __m512i x[4];
  SLUICE_QUANT_UNROLL for (int k = 0; k < 4; ++k) {
    x[k] = _mm512_add_epi32(_mm512_unpacklo_epi32(v[2 * k], v[2 * k + 1]),
                            _mm512_unpackhi_epi32(v[2 * k], v[2 * k + 1]));
  }
  // Per 128 bits j: y[0] holds the sums of v[0..3]'s four lanes j, y[1] those of v[4..7].
  __m512i y[2];
  SLUICE_QUANT_UNROLL for (int k = 0; k < 2; ++k) {
    y[k] = _mm512_add_epi32(_mm512_unpacklo_epi64(x[2 * k], x[2 * k + 1]),
                            _mm512_unpackhi_epi64(x[2 * k], x[2 * k + 1]));
  }
  const __m512i even = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
  const __m512i odd = _mm512_setr_epi32(4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
  return _mm512_add_epi32(_mm512_permutex2var_epi32(y[0], even, y[1]),
                          _mm512_permutex2var_epi32(y[0], odd, y[1]));
}

// Lane p = the sum of the sixteen lanes of v[p].
SLUICE_AVX512_VNNI_INLINE __m256i sum_lanes16(const __m512i* v) {
  const __m512i halves = sum_half_lanes8(v);
  return _mm256_add_epi32(_mm512_castsi512_si256(halves), _mm512_extracti64x4_epi64(halves, 1));
}

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

SLUICE_AVX512_VNNI_INLINE __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// (x >> shift) & mask in every byte (the 16-bit shift's spill from the next byte is masked off).
SLUICE_AVX512_VNNI_INLINE __m256i shift_mask(__m256i x, int shift, int mask) {
  return _mm256_and_si256(_mm256_srl_epi16(x, _mm_cvtsi32_si128(shift)),
                          _mm256_set1_epi8(static_cast<char>(mask)));
}

// Reading blocks straight from memory, the kernel's loads wait on each new block unless it is
// fetched ahead: step i of n of the current tile prefetches the same share of the next tile
// (the rows after the tile's, contiguous with them), so the next tile arrives while this one
// is multiplied.
struct NextTilePrefetch {
  const uint8_t* next = nullptr;  // the first byte after the tile's rows
  int64_t tile_bytes = 0;

  SLUICE_AVX512_VNNI_INLINE void prefetch(int64_t i, int64_t n) const {
    const int64_t begin = i * tile_bytes / n / 64 * 64;
    const int64_t end = (i + 1) * tile_bytes / n;
    for (int64_t at = begin; at < end; at += 64)
      _mm_prefetch(reinterpret_cast<const char*>(next + at), _MM_HINT_T0);
  }
};

// Q8_0 rows: the values as stored; a row of an odd number of blocks ends in a half chunk whose
// second block is zero values with a zero scale, as unpack_weight_rows pads it.
template <int kRows>
struct RawQ8_0Rows : NextTilePrefetch {
  const quant::BlockQ8_0* blocks[kRows];
  int64_t num_blocks;

  SLUICE_AVX512_VNNI_INLINE __m512i chunk(int r, int64_t c) const {
    const quant::BlockQ8_0* b = blocks[r] + 2 * c;
    return join(load32(b[0].qs), 2 * c + 1 < num_blocks ? load32(b[1].qs) : _mm256_setzero_si256());
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
    const __m256i q = load32(b.qs + 32 * c);
    __m256i low = shift_mask(q, 0, 0x0f);
    __m256i high = shift_mask(q, 4, 0x0f);
    if constexpr (kHasHighBit) {
      const __m256i qh = load32(b.qh);
      low = _mm256_or_si256(low, _mm256_slli_epi16(shift_mask(qh, 2 * c, 1), 4));
      high = _mm256_or_si256(high, _mm256_slli_epi16(shift_mask(qh, 2 * c + 1, 1), 4));
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
    const __m256i qh = load32(b.qh + 32 * half);
    const __m256i ql0 = load32(b.ql + 64 * half);
    const __m256i ql1 = load32(b.ql + 64 * half + 32);
    const __m256i bias = _mm256_set1_epi8(32);
    const __m256i low = _mm256_or_si256(shift_mask(ql0, shift, 0x0f),
                                        _mm256_slli_epi16(shift_mask(qh, shift, 3), 4));
    const __m256i high = _mm256_or_si256(shift_mask(ql1, shift, 0x0f),
                                         _mm256_slli_epi16(shift_mask(qh, shift + 2, 3), 4));
    return join(_mm256_sub_epi8(low, bias), _mm256_sub_epi8(high, bias));
  }
};

// ---- The kernels, over any weight source.

template <bool kHasMin, int kRows, int kTokens, typename Rows>
SLUICE_AVX512_VNNI_INLINE void block32_tile(const Rows& rows, const QuantTokenPointers<kTokens>& p,
                                            int64_t num_chunks, float* y, int64_t ldy) {
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i zero = _mm512_setzero_si512();
  __m256 acc = _mm256_setzero_ps();  // lane t * kRows + r
  for (int64_t c = 0; c < num_chunks; ++c) {
    rows.prefetch(c, num_chunks);
    __m512i w[kRows];
    __m512i minus_correction[kRows];  // -128 * (sum of each lane's four weights)
    SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
      w[r] = rows.chunk(r, c);
      if constexpr (!kHasMin) {
        minus_correction[r] = _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, offset, w[r]));
      }
    }
    __m512i sums[kQuantTilePairs];
    SLUICE_QUANT_UNROLL for (int i = kRows * kTokens; i < kQuantTilePairs; ++i) sums[i] = zero;
    SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
      const __m512i a = _mm512_load_si512(p.a[t] + c * kQuantChunk);
      SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
        // Weights with a min are never negative: they are the unsigned operand, and the
        // activations keep their sign. The others take q + 128 activations and the weights'
        // 128 * sum(w) off again.
        sums[t * kRows + r] = kHasMin ? _mm512_dpbusd_epi32(zero, w[r], a)
                                      : _mm512_dpbusd_epi32(minus_correction[r], a, w[r]);
      }
    }
    // Lanes 0-7: block 2c of each pair, lanes 8-15: block 2c + 1.
    const __m512 block_sums = _mm512_cvtepi32_ps(sum_half_lanes8(sums));
    SLUICE_QUANT_UNROLL for (int h = 0; h < 2; ++h) {
      const int64_t b = 2 * c + h;
      float dw[kRows], dx[kTokens], mw[kRows], sx[kTokens];
      SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
        dw[r] = rows.d_block(r, b);
        if constexpr (kHasMin) mw[r] = rows.m_block(r, b);
      }
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
        dx[t] = p.dx[t][b];
        if constexpr (kHasMin) sx[t] = p.sx[t][b];
      }
      const __m256 s =
          h == 0 ? _mm512_castps512_ps256(block_sums)
                 : _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(block_sums), 1));
      acc = _mm256_fmadd_ps(
          s, _mm256_mul_ps(row_lanes<kRows, kTokens>(dw), token_lanes<kRows, kTokens>(dx)), acc);
      if constexpr (kHasMin) {
        acc = _mm256_fmadd_ps(row_lanes<kRows, kTokens>(mw), token_lanes<kRows, kTokens>(sx), acc);
      }
    }
  }
  store_pairs<kRows, kTokens>(acc, y, ldy);
}

template <bool kHasMin, int kRows, int kTokens, typename Rows>
SLUICE_AVX512_VNNI_INLINE void super256_tile(Rows& rows, const QuantTokenPointers<kTokens>& p,
                                             int64_t num_super_blocks, float* y, int64_t ldy) {
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i low_half = _mm512_set1_epi32(0xffff);
  const __m512i zero = _mm512_setzero_si512();
  __m256 acc = _mm256_setzero_ps();  // lane t * kRows + r
  __m256 min_acc = _mm256_setzero_ps();
  for (int64_t sb = 0; sb < num_super_blocks; ++sb) {
    __m512i isum[kRows][kTokens];
    __m512i correction[kRows];
    __m512i group_scale[kRows];  // the 16 scales of the super-block, in their low 16 bits
    rows.prefetch(sb, num_super_blocks);
    SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
      rows.begin(r, sb);
      correction[r] = zero;
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) isum[r][t] = zero;
      group_scale[r] = _mm512_and_si512(_mm512_cvtepi8_epi32(rows.group_scales(r, sb)), low_half);
    }
    for (int c = 0; c < 4; ++c) {
      const int64_t e = sb * quant::kBlockK + c * kQuantChunk;
      // Lane l of chunk c holds elements 64c + 4l..+3: group 4c + l / 4.
      const __m512i lane_group =
          _mm512_add_epi32(_mm512_set1_epi32(4 * c),
                           _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0));
      __m512i w[kRows];
      __m512i scale[kRows];  // each lane's group scale in its low 16 bits
      SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
        w[r] = rows.chunk(r, sb, c);
        scale[r] = _mm512_permutexvar_epi32(lane_group, group_scale[r]);
        // Every lane's byte sum fits in 16 bits for the K-quants (|w| <= 32, 4 * 255 * 32 <
        // 2^15), so vpdpwssd against (scale, 0) multiplies it by the scale and accumulates.
        // Weights with a min are never negative and need no correction (as in block32_tile).
        if constexpr (!kHasMin) {
          correction[r] =
              _mm512_dpwssd_epi32(correction[r], _mm512_dpbusd_epi32(zero, offset, w[r]), scale[r]);
        }
      }
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
        const __m512i a = _mm512_load_si512(p.a[t] + e);
        SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
          const __m512i sum =
              kHasMin ? _mm512_dpbusd_epi32(zero, w[r], a) : _mm512_dpbusd_epi32(zero, a, w[r]);
          isum[r][t] = _mm512_dpwssd_epi32(isum[r][t], sum, scale[r]);
        }
      }
    }
    __m512i sums[kQuantTilePairs];
    SLUICE_QUANT_UNROLL for (int i = kRows * kTokens; i < kQuantTilePairs; ++i) sums[i] = zero;
    SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
      SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
        sums[t * kRows + r] = kHasMin ? isum[r][t] : _mm512_sub_epi32(isum[r][t], correction[r]);
      }
    }
    float dw[kRows], dm[kRows], dx_values[kTokens];
    SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
      dw[r] = rows.d(r, sb);
      dm[r] = rows.m(r, sb);
    }
    SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) dx_values[t] = p.dx[t][sb];
    const __m256 dx = token_lanes<kRows, kTokens>(dx_values);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_lanes16(sums)),
                          _mm256_mul_ps(row_lanes<kRows, kTokens>(dw), dx), acc);
    if constexpr (kHasMin) {
      __m256i products[kQuantTilePairs] = {};
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
        SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
          products[t * kRows + r] = super256_min_products(rows.mins(r, sb), p.bsum[t] + sb * 16);
        }
      }
      min_acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_lanes8(products)),
                                _mm256_mul_ps(row_lanes<kRows, kTokens>(dm), dx), min_acc);
    }
  }
  store_pairs<kRows, kTokens>(kHasMin ? _mm256_sub_ps(acc, min_acc) : acc, y, ldy);
}

template <bool kHasMin>
struct Block32Kernel {
  template <int kRows, int kTokens>
  SLUICE_AVX512_VNNI static void run(const QuantTileArgs& args) {
    const UnpackedRows<kRows> rows{{args.weights, args.row0}};
    block32_tile<kHasMin, kRows, kTokens>(rows, QuantTokenPointers<kTokens>(args.act, args.t0),
                                          args.weights.w_stride / kQuantChunk, args.y, args.ldy);
  }
};

template <bool kHasMin>
struct Super256Kernel {
  template <int kRows, int kTokens>
  SLUICE_AVX512_VNNI static void run(const QuantTileArgs& args) {
    UnpackedRows<kRows> rows{{args.weights, args.row0}};
    super256_tile<kHasMin, kRows, kTokens>(rows, QuantTokenPointers<kTokens>(args.act, args.t0),
                                           args.weights.cols / quant::kBlockK, args.y, args.ldy);
  }
};

// The direct path: the tile's rows read from their blocks (row r at rows + r * row_bytes).
struct DirectTile {
  DType dtype;
  const uint8_t* rows;
  size_t row_bytes;
  int64_t cols;
  const QuantizedActivations& act;
  int64_t t0;
  float* y;
  int64_t ldy;

  template <typename Source>
  SLUICE_AVX512_VNNI_INLINE void point(Source& src) const {
    using Block =
        std::remove_cv_t<std::remove_pointer_t<std::remove_extent_t<decltype(src.blocks)>>>;
    constexpr int kRows = static_cast<int>(std::extent_v<decltype(src.blocks)>);
    for (int r = 0; r < kRows; ++r)
      src.blocks[r] = reinterpret_cast<const Block*>(rows + static_cast<size_t>(r) * row_bytes);
    src.next = rows + static_cast<size_t>(kRows) * row_bytes;
    src.tile_bytes = static_cast<int64_t>(kRows * row_bytes);
  }

  template <int kRows, int kTokens>
  SLUICE_AVX512_VNNI void run() const {
    const QuantTokenPointers<kTokens> p(act, t0);
    const int64_t num_super_blocks = cols / quant::kBlockK;
    switch (dtype) {
      case DType::Q8_0: {
        RawQ8_0Rows<kRows> src{};
        point(src);
        src.num_blocks = cols / quant::kBlock32;
        return block32_tile<false, kRows, kTokens>(src, p, (cols + kQuantChunk - 1) / kQuantChunk,
                                                   y, ldy);
      }
      case DType::Q4_K: {
        RawQ45KRows<quant::BlockQ4_K, false, kRows> src{};
        point(src);
        return super256_tile<true, kRows, kTokens>(src, p, num_super_blocks, y, ldy);
      }
      case DType::Q5_K: {
        RawQ45KRows<quant::BlockQ5_K, true, kRows> src{};
        point(src);
        return super256_tile<true, kRows, kTokens>(src, p, num_super_blocks, y, ldy);
      }
      case DType::Q6_K: {
        RawQ6KRows<kRows> src{};
        point(src);
        return super256_tile<false, kRows, kTokens>(src, p, num_super_blocks, y, ldy);
      }
      default:
        return;  // has_direct_quant_kernel said no
    }
  }
};

}  // namespace avx512_vnni_kernels

bool has_direct_quant_kernel_avx512_vnni(DType dtype) {
  return dtype == DType::Q8_0 || dtype == DType::Q4_K || dtype == DType::Q5_K ||
         dtype == DType::Q6_K;
}

SLUICE_AVX512_VNNI void quant_direct_tile_avx512_vnni(DType dtype, const uint8_t* rows,
                                                      size_t row_bytes, int num_rows, int64_t cols,
                                                      const QuantizedActivations& act, int64_t t0,
                                                      int num_tokens, float* y, int64_t ldy) {
  const avx512_vnni_kernels::DirectTile tile{dtype, rows, row_bytes, cols, act, t0, y, ldy};
  dispatch_tile_shape(num_rows, num_tokens, tile);
}

SLUICE_AVX512_VNNI void quant_dot_tile_avx512_vnni(const UnpackedWeights& weights, int row0,
                                                   int num_rows, const QuantizedActivations& act,
                                                   int64_t t0, int num_tokens, float* y,
                                                   int64_t ldy) {
  dispatch_quant_family_tile<avx512_vnni_kernels::Block32Kernel,
                             avx512_vnni_kernels::Super256Kernel>(num_rows, num_tokens,
                                                                  {weights, row0, act, t0, y, ldy});
}

}  // namespace sluice

#endif  // SLUICE_QUANT_X86
