// The AVX2 version of the quantized dot-product tiles (cpu_quant_dot.h gives the order of
// operations; cpu_quant_dot.cpp's scalar version is its definition). Sixteen lanes are two ymm
// registers; bytes are multiplied with vpmaddubsw after moving the weight's sign onto the
// activation (|w| * sign(a, w)), which cannot saturate because |a| <= 127 and |w| <= 128 (the
// types with a min have no negative weights and skip that step). Rows come unpacked or straight
// from their GGUF blocks (cpu_quant_rows_avx2.h), through the same kernels.
#include "engine/backend/cpu/cpu_quant_rows_avx2.h"

#if SLUICE_QUANT_X86

namespace sluice {

// A named namespace, not an anonymous one: the kernels instantiate the shared dispatch
// templates (cpu_quant_dot_simd.h), and GCC gives those instantiations the same mangled name in
// both SIMD files when the kernels live in anonymous namespaces, so an unoptimised build linked
// the AVX2 kernels into the AVX-512 entry point.
namespace avx2_kernels {

SLUICE_AVX2_INLINE __m256i load32(const int8_t* p) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
}

// Sixteen int16 pair sums of w * a per 32 bytes: lane pairs (2l, 2l + 1) hold elements
// 4l..4l+3. Weights of the types with a min are never negative (at most 31): they are
// vpmaddubsw's unsigned operand as they are.
template <bool kUnsignedWeights = false>
SLUICE_AVX2_INLINE __m256i pair_products(__m256i w, __m256i a) {
  if constexpr (kUnsignedWeights) return _mm256_maddubs_epi16(w, a);
  return _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
}

// Lane i of each 128-bit half of v in all four lanes of that half (i a constant once unrolled).
SLUICE_AVX2_INLINE __m256i lane_of_halves(__m256i v, int i) {
  switch (i) {
    case 0:
      return _mm256_shuffle_epi32(v, 0x00);
    case 1:
      return _mm256_shuffle_epi32(v, 0x55);
    case 2:
      return _mm256_shuffle_epi32(v, 0xaa);
    default:
      return _mm256_shuffle_epi32(v, 0xff);
  }
}

template <bool kHasMin, int kRows, int kTokens, typename Rows>
SLUICE_AVX2_INLINE void block32_tile(const Rows& rows, const QuantTokenPointers<kTokens>& p,
                                     int64_t num_blocks, float* y, int64_t ldy) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc = _mm256_setzero_ps();  // lane t * kRows + r
  for (int64_t b = 0; b < num_blocks; ++b) {
    rows.prefetch(b, num_blocks);
    __m256i w[kRows];
    SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) w[r] = rows.block(r, b);
    __m256i products[kQuantTilePairs] = {};
    SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
      const __m256i a = load32(p.a[t] + b * quant::kBlock32);
      SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
        products[t * kRows + r] = _mm256_madd_epi16(pair_products<kHasMin>(w[r], a), ones);
      }
    }
    float dw[kRows], mw[kRows], dx[kTokens], sx[kTokens];
    SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
      dw[r] = rows.d_block(r, b);
      if constexpr (kHasMin) mw[r] = rows.m_block(r, b);
    }
    SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
      dx[t] = p.dx[t][b];
      if constexpr (kHasMin) sx[t] = p.sx[t][b];
    }
    const __m256 dd = _mm256_mul_ps(row_lanes<kRows, kTokens>(dw), token_lanes<kRows, kTokens>(dx));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_lanes8<kRows * kTokens>(products)), dd, acc);
    if constexpr (kHasMin) {
      acc = _mm256_fmadd_ps(row_lanes<kRows, kTokens>(mw), token_lanes<kRows, kTokens>(sx), acc);
    }
  }
  store_pairs<kRows, kTokens>(acc, y, ldy);
}

template <bool kHasMin, int kRows, int kTokens, typename Rows>
SLUICE_AVX2_INLINE void super256_tile(Rows& rows, const QuantTokenPointers<kTokens>& p,
                                      int64_t num_super_blocks, float* y, int64_t ldy) {
  __m256 acc = _mm256_setzero_ps();  // lane t * kRows + r
  __m256 min_acc = _mm256_setzero_ps();
  for (int64_t sb = 0; sb < num_super_blocks; ++sb) {
    rows.prefetch(sb, num_super_blocks);
    __m256i isum[kRows][kTokens];
    // The super-block's 16 group scales as 32-bit lanes holding the scale in both 16-bit
    // halves, even groups in the low 128 bits and odd ones in the high: groups 0-7 in
    // scale_pairs[r][0], 8-15 in [1]. Part p then takes lane p % 4 of each half (vpshufd).
    __m256i scale_pairs[kRows][2];
    SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
      rows.begin(r, sb);
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) isum[r][t] = _mm256_setzero_si256();
      const __m256i by_parity = _mm256_cvtepi8_epi16(
          _mm_shuffle_epi8(rows.group_scales(r, sb),
                           _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15)));
      scale_pairs[r][0] = _mm256_unpacklo_epi16(by_parity, by_parity);
      scale_pairs[r][1] = _mm256_unpackhi_epi16(by_parity, by_parity);
    }
    // 32 bytes at a time: part p is elements 32p..32p+31; lanes 0-3 take the scale of group
    // 2p, lanes 4-7 that of group 2p + 1.
    SLUICE_QUANT_UNROLL for (int part = 0; part < 8; ++part) {
      const int64_t e = sb * quant::kBlockK + part * 32;
      __m256i w[kRows];
      __m256i scale[kRows];
      SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
        w[r] = rows.part(r, sb, part);
        scale[r] = lane_of_halves(scale_pairs[r][part / 4], part % 4);
      }
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
        const __m256i a = load32(p.a[t] + e);
        SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
          isum[r][t] = _mm256_add_epi32(
              isum[r][t], _mm256_madd_epi16(pair_products<kHasMin>(w[r], a), scale[r]));
          // Keeps the sums a chain: GCC otherwise reassociates the eight parts into a tree and
          // spills every product of the super-block to the stack.
          __asm__("" : "+x"(isum[r][t]));
        }
      }
    }
    __m256i sums[kQuantTilePairs] = {};
    SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
      SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) sums[t * kRows + r] = isum[r][t];
    }
    float dw[kRows], dm[kRows], dx_values[kTokens];
    SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
      dw[r] = rows.d(r, sb);
      if constexpr (kHasMin) dm[r] = rows.m(r, sb);
    }
    SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) dx_values[t] = p.dx[t][sb];
    const __m256 dx = token_lanes<kRows, kTokens>(dx_values);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_lanes8<kRows * kTokens>(sums)),
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
  SLUICE_AVX2 static void run(const QuantTileArgs& args) {
    const UnpackedRows<kRows> rows{{args.weights, args.row0}};
    block32_tile<kHasMin, kRows, kTokens>(rows, QuantTokenPointers<kTokens>(args.act, args.t0),
                                          args.weights.w_stride / quant::kBlock32, args.y,
                                          args.ldy);
  }
};

template <bool kHasMin>
struct Super256Kernel {
  template <int kRows, int kTokens>
  SLUICE_AVX2 static void run(const QuantTileArgs& args) {
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
  SLUICE_AVX2 void run() const {
    const QuantTokenPointers<kTokens> p(act, t0);
    const int64_t num_super_blocks = cols / quant::kBlockK;
    switch (dtype) {
      case DType::Q8_0: {
        RawQ8_0Rows<kRows> src{};
        point_at_rows(src, rows, row_bytes);
        src.num_blocks = cols / quant::kBlock32;
        // Whole pairs of blocks, as the unpacked rows have.
        const int64_t num_blocks = (cols + kQuantChunk - 1) / kQuantChunk * 2;
        return block32_tile<false, kRows, kTokens>(src, p, num_blocks, y, ldy);
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

// One token against eight Q8_0 rows read from their blocks, one row per lane: a block's eight
// integer sums are reduced together and its eight scales converted as one vector, where the
// 2-row tile reduces and converts each row on its own. Per output the same operations as
// block32_tile: acc = fma(float(S_b), d_w * d_x, acc) over the blocks in order, the padding
// block past an odd count included (zero values, zero scale).
SLUICE_AVX2_INLINE void q8_0_rows8_one_token(const uint8_t* rows, size_t row_bytes, int64_t cols,
                                             const int8_t* a, const float* dx, float* y) {
  static_assert(kQuantWideRows == 8, "one row per lane of a ymm");
  const __m256i ones = _mm256_set1_epi16(1);
  const int64_t num_blocks = cols / quant::kBlock32;
  const int64_t num_padded = (cols + kQuantChunk - 1) / kQuantChunk * 2;
  const quant::BlockQ8_0* blocks[kQuantWideRows];
  for (int r = 0; r < kQuantWideRows; ++r)
    blocks[r] =
        reinterpret_cast<const quant::BlockQ8_0*>(rows + static_cast<size_t>(r) * row_bytes);
  NextTilePrefetch next;
  next.next = rows + kQuantWideRows * row_bytes;
  next.tile_bytes = static_cast<int64_t>(kQuantWideRows * row_bytes);
  __m256 acc = _mm256_setzero_ps();  // lane r
  for (int64_t b = 0; b < num_blocks; ++b) {
    next.prefetch(b, num_blocks);
    const __m256i av = load32(a + b * quant::kBlock32);
    __m256i products[kQuantWideRows];
    uint16_t d[kQuantWideRows];
    SLUICE_QUANT_UNROLL for (int r = 0; r < kQuantWideRows; ++r) {
      products[r] = _mm256_madd_epi16(pair_products(loadu32(blocks[r][b].qs), av), ones);
      d[r] = blocks[r][b].d;
    }
    const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d)));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_lanes8<kQuantWideRows>(products)),
                          _mm256_mul_ps(dw, _mm256_set1_ps(dx[b])), acc);
  }
  // The padding block adds fma(0, 0 * 0, acc) = acc + 0 (which turns -0 into +0).
  if (num_padded > num_blocks) acc = _mm256_add_ps(acc, _mm256_setzero_ps());
  _mm256_storeu_ps(y, acc);
}

}  // namespace avx2_kernels

bool has_direct_quant_kernel_avx2(DType dtype) {
  return dtype == DType::Q8_0 || dtype == DType::Q4_K || dtype == DType::Q5_K ||
         dtype == DType::Q6_K;
}

SLUICE_AVX2 void quant_direct_tile_avx2(DType dtype, const uint8_t* rows, size_t row_bytes,
                                        int num_rows, int64_t cols, const QuantizedActivations& act,
                                        int64_t t0, int num_tokens, float* y, int64_t ldy) {
  const avx2_kernels::DirectTile tile{dtype, rows, row_bytes, cols, act, t0, y, ldy};
  dispatch_tile_shape(num_rows, num_tokens, tile);
}

SLUICE_AVX2 void quant_direct_wide_avx2(DType dtype, const uint8_t* rows, size_t row_bytes,
                                        int64_t cols, const QuantizedActivations& act, int64_t t,
                                        float* y) {
  if (dtype == DType::Q8_0) {
    avx2_kernels::q8_0_rows8_one_token(rows, row_bytes, cols, act.token_qs(t), act.token_scale(t),
                                       y);
  }
}

SLUICE_AVX2 void quant_dot_tile_avx2(const UnpackedWeights& weights, int row0, int num_rows,
                                     const QuantizedActivations& act, int64_t t0, int num_tokens,
                                     float* y, int64_t ldy) {
  dispatch_quant_family_tile<avx2_kernels::Block32Kernel, avx2_kernels::Super256Kernel>(
      num_rows, num_tokens, {weights, row0, act, t0, y, ldy});
}

}  // namespace sluice

#endif  // SLUICE_QUANT_X86
