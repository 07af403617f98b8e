// The AVX-512 VNNI version of the quantized dot-product tiles (cpu_quant_dot.h gives the order
// of operations; cpu_quant_dot.cpp's scalar version is its definition). vpdpbusd multiplies
// unsigned by signed bytes: weights with a min (never negative) are the unsigned operand; for
// the others the activations arrive as q + 128 and each weight chunk's 128 * sum(w) is taken off
// again. Weights and activations of a chunk are loaded once and used for every (row, token)
// pair of the tile.
#include "engine/backend/cpu/cpu_quant_raw_rows_avx512.h"

#include <cstring>

#include "engine/core/quant_blocks.h"

#if SLUICE_QUANT_X86

namespace sluice {

// A named namespace, not an anonymous one: the kernels instantiate the shared dispatch
// templates (cpu_quant_dot_simd.h), and GCC gives those instantiations the same mangled name in
// both SIMD files when the kernels live in anonymous namespaces, so an unoptimised build linked
// the AVX2 kernels into the AVX-512 entry point.
namespace avx512_vnni_kernels {

// Lane 8h + p = the sum of the eight lanes of half h of v[p] for p < kPairs (exact integer
// sums, so any order): each 64-element chunk's two blocks of 32, for all pairs of a tile at
// once. The other lanes hold integers that the callers multiply by 0.
template <int kPairs>
SLUICE_AVX512_VNNI_INLINE __m512i sum_half_lanes8(const __m512i* v) {
  if constexpr (kPairs <= 2) {  // (decoding one token: two rows)
    // Per 128 bits: [v0, v1, v0, v1] partial sums, then v0's and v1's sums in lanes 0 and 1.
    const __m512i t =
        _mm512_add_epi32(_mm512_unpacklo_epi32(v[0], v[1]), _mm512_unpackhi_epi32(v[0], v[1]));
    const __m512i x = _mm512_add_epi32(t, _mm512_unpackhi_epi64(t, t));
    // 128 bits 2h and 2h + 1 are half h: their sum lands in lanes 8h, 8h + 1.
    return _mm512_add_epi32(x, _mm512_shuffle_i32x4(x, x, _MM_SHUFFLE(2, 3, 0, 1)));
  } else {
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
    const __m512i even =
        _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
    const __m512i odd =
        _mm512_setr_epi32(4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31);
    return _mm512_add_epi32(_mm512_permutex2var_epi32(y[0], even, y[1]),
                            _mm512_permutex2var_epi32(y[0], odd, y[1]));
  }
}

// Lane p = the sum of the sixteen lanes of v[p] for p < kPairs.
template <int kPairs>
SLUICE_AVX512_VNNI_INLINE __m256i sum_lanes16(const __m512i* v) {
  const __m512i halves = sum_half_lanes8<kPairs>(v);
  return _mm256_add_epi32(_mm512_castsi512_si256(halves), _mm512_extracti64x4_epi64(halves, 1));
}

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
    const __m512 block_sums = _mm512_cvtepi32_ps(sum_half_lanes8<kRows * kTokens>(sums));
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
    float dw[kRows], dm[kRows] = {}, dx_values[kTokens];
    SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
      dw[r] = rows.d(r, sb);
      if constexpr (kHasMin) dm[r] = rows.m(r, sb);
    }
    SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) dx_values[t] = p.dx[t][sb];
    const __m256 dx = token_lanes<kRows, kTokens>(dx_values);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_lanes16<kRows * kTokens>(sums)),
                          _mm256_mul_ps(row_lanes<kRows, kTokens>(dw), dx), acc);
    if constexpr (kHasMin) {
      __m256i products[kQuantTilePairs] = {};
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
        SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
          products[t * kRows + r] = super256_min_products(rows.mins(r, sb), p.bsum[t] + sb * 16);
        }
      }
      min_acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_lanes8<kRows * kTokens>(products)),
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

  template <int kRows, int kTokens>
  SLUICE_AVX512_VNNI void run() const {
    const QuantTokenPointers<kTokens> p(act, t0);
    const int64_t num_super_blocks = cols / quant::kBlockK;
    switch (dtype) {
      case DType::Q8_0: {
        RawQ8_0Rows<kRows> src{};
        point_at_rows(src, rows, row_bytes);
        src.num_blocks = cols / quant::kBlock32;
        return block32_tile<false, kRows, kTokens>(src, p, (cols + kQuantChunk - 1) / kQuantChunk,
                                                   y, ldy);
      }
      case DType::Q4_K: {
        RawQ45KRows<quant::BlockQ4_K, false, kRows> src{};
        point_at_rows(src, rows, row_bytes);
        return super256_tile<true, kRows, kTokens>(src, p, num_super_blocks, y, ldy);
      }
      case DType::Q5_K: {
        RawQ45KRows<quant::BlockQ5_K, true, kRows> src{};
        point_at_rows(src, rows, row_bytes);
        return super256_tile<true, kRows, kTokens>(src, p, num_super_blocks, y, ldy);
      }
      case DType::Q6_K: {
        RawQ6KRows<kRows> src{};
        point_at_rows(src, rows, row_bytes);
        return super256_tile<false, kRows, kTokens>(src, p, num_super_blocks, y, ldy);
      }
      default:
        return;  // has_direct_quant_kernel said no
    }
  }
};

// One token against eight Q8_0 rows read from their blocks: the eight rows' integer sums of a
// chunk are reduced together (sum_half_lanes8, as the 2-row tile reduces two), and the chunk's
// sixteen f16 scales are converted as one vector where the tile converts each on its own. Per
// output the same operations as block32_tile: acc = fma(float(S_b), d_w * d_x, acc) over the
// blocks in order, the padding block past an odd count included (zero values, zero scale).
SLUICE_AVX512_VNNI_INLINE void q8_0_rows8_one_token(const uint8_t* rows, size_t row_bytes,
                                                    int64_t cols, const int8_t* a, const float* dx,
                                                    float* y) {
  static_assert(kQuantWideRows == 8, "one row per lane of a ymm");
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i zero = _mm512_setzero_si512();
  RawQ8_0Rows<kQuantWideRows> src{};
  point_at_rows(src, rows, row_bytes);
  src.num_blocks = cols / quant::kBlock32;
  const int64_t num_chunks = (cols + kQuantChunk - 1) / kQuantChunk;
  __m256 acc = _mm256_setzero_ps();  // lane r
  for (int64_t c = 0; c < num_chunks; ++c) {
    src.prefetch(c, num_chunks);
    const __m512i av = _mm512_load_si512(a + c * kQuantChunk);
    __m512i sums[kQuantWideRows];
    // Scales: lanes 0-7 block 2c of rows 0-7, lanes 8-15 block 2c + 1 (zero past the end).
    alignas(32) uint16_t d[2 * kQuantWideRows] = {};
    const bool second = 2 * c + 1 < src.num_blocks;
    SLUICE_QUANT_UNROLL for (int r = 0; r < kQuantWideRows; ++r) {
      const __m512i w = src.chunk(r, c);
      const __m512i minus_correction = _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, offset, w));
      sums[r] = _mm512_dpbusd_epi32(minus_correction, av, w);
      d[r] = src.blocks[r][2 * c].d;
      if (second) d[kQuantWideRows + r] = src.blocks[r][2 * c + 1].d;
    }
    const __m512 block_sums = _mm512_cvtepi32_ps(sum_half_lanes8<kQuantWideRows>(sums));
    const __m512 dw = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(d)));
    acc =
        _mm256_fmadd_ps(_mm512_castps512_ps256(block_sums),
                        _mm256_mul_ps(_mm512_castps512_ps256(dw), _mm256_set1_ps(dx[2 * c])), acc);
    acc = _mm256_fmadd_ps(
        _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(block_sums), 1)),
        _mm256_mul_ps(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(dw), 1)),
                      _mm256_set1_ps(dx[2 * c + 1])),
        acc);
  }
  _mm256_storeu_ps(y, acc);
}

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

SLUICE_AVX512_VNNI void quant_direct_wide_avx512_vnni(DType dtype, const uint8_t* rows,
                                                      size_t row_bytes, int64_t cols,
                                                      const QuantizedActivations& act, int64_t t,
                                                      float* y) {
  if (dtype == DType::Q8_0) {
    avx512_vnni_kernels::q8_0_rows8_one_token(rows, row_bytes, cols, act.token_qs(t),
                                              act.token_scale(t), y);
  }
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
