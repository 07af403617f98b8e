// The AVX2 version of the quantized dot-product tiles (cpu_quant_dot.h gives the order of
// operations; cpu_quant_dot.cpp's scalar version is its definition). Sixteen lanes are two ymm
// registers; bytes are multiplied with vpmaddubsw after moving the weight's sign onto the
// activation (|w| * sign(a, w)), which cannot saturate because |a| <= 127 and |w| <= 128.
#include "engine/backend/cpu_quant_dot_simd.h"

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

// Eight int16 pair sums of w * a per 32 bytes: lane pairs (2l, 2l + 1) hold elements 4l..4l+3.
SLUICE_AVX2_INLINE __m256i pair_products(__m256i w, __m256i a) {
  return _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
}

template <bool kHasMin>
struct Block32Kernel {
  template <int kRows, int kTokens>
  SLUICE_AVX2 static void run(const QuantTileArgs& args) {
    const UnpackedWeights& weights = args.weights;
    const QuantizedActivations& act = args.act;
    const __m256i ones = _mm256_set1_epi16(1);
    const int64_t row0 = args.row0;
    const int64_t t0 = args.t0;
    __m256 acc = _mm256_setzero_ps();  // lane t * kRows + r
    for (int64_t b = 0; b < weights.w_stride / quant::kBlock32; ++b) {
      __m256i w[kRows];
      SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
        w[r] = load32(weights.row_w(args.row0 + r) + b * quant::kBlock32);
      }
      __m256i products[kQuantTilePairs] = {};
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
        const __m256i a = load32(act.token_qs(args.t0 + t) + b * quant::kBlock32);
        SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
          products[t * kRows + r] = _mm256_madd_epi16(pair_products(w[r], a), ones);
        }
      }
      float dw[kRows], mw[kRows], dx[kTokens], sx[kTokens];
      SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
        dw[r] = weights.row_d(row0 + r)[b];
        if constexpr (kHasMin) mw[r] = weights.row_m(row0 + r)[b];
      }
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
        dx[t] = act.token_scale(t0 + t)[b];
        if constexpr (kHasMin) sx[t] = act.token_sum(t0 + t)[b];
      }
      const __m256 dd =
          _mm256_mul_ps(row_lanes<kRows, kTokens>(dw), token_lanes<kRows, kTokens>(dx));
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_lanes8<kRows * kTokens>(products)), dd, acc);
      if constexpr (kHasMin) {
        acc = _mm256_fmadd_ps(row_lanes<kRows, kTokens>(mw), token_lanes<kRows, kTokens>(sx), acc);
      }
    }
    store_pairs<kRows, kTokens>(acc, args.y, args.ldy);
  }
};

template <bool kHasMin>
struct Super256Kernel {
  template <int kRows, int kTokens>
  SLUICE_AVX2 static void run(const QuantTileArgs& args) {
    const UnpackedWeights& weights = args.weights;
    const QuantizedActivations& act = args.act;
    const int64_t row0 = args.row0;
    const int64_t t0 = args.t0;
    __m256 acc = _mm256_setzero_ps();  // lane t * kRows + r
    __m256 min_acc = _mm256_setzero_ps();
    for (int64_t sb = 0; sb < weights.cols / quant::kBlockK; ++sb) {
      __m256i isum[kRows][kTokens][2];
      SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
        SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) isum[r][t][0] = isum[r][t][1] =
            _mm256_setzero_si256();
      }
      // 32 bytes at a time: part 2c + h is half h (lanes 8h..8h+7) of chunk c; its eight lanes
      // take the scales of groups 2 * part and 2 * part + 1, four lanes each.
      for (int part = 0; part < 8; ++part) {
        const int64_t e = sb * quant::kBlockK + part * 32;
        const __m256i lane_group = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
        __m256i w[kRows];
        __m256i scale[kRows];  // each lane's group scale in both 16-bit halves
        SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
          w[r] = load32(weights.row_w(args.row0 + r) + e);
          const int8_t* groups = weights.row_group_scale(args.row0 + r) + sb * 16 + 2 * part;
          const __m256i s = _mm256_permutevar8x32_epi32(
              _mm256_setr_epi32(groups[0], groups[1], 0, 0, 0, 0, 0, 0), lane_group);
          scale[r] = _mm256_or_si256(_mm256_and_si256(s, _mm256_set1_epi32(0xffff)),
                                     _mm256_slli_epi32(s, 16));
        }
        SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
          const __m256i a = load32(act.token_qs(args.t0 + t) + e);
          SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
            __m256i& sum = isum[r][t][part % 2];
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pair_products(w[r], a), scale[r]));
          }
        }
      }
      __m256i sums[kQuantTilePairs] = {};
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
        SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
          sums[t * kRows + r] = _mm256_add_epi32(isum[r][t][0], isum[r][t][1]);
        }
      }
      float dw[kRows], dm[kRows], dx_values[kTokens];
      SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
        dw[r] = weights.row_d(row0 + r)[sb];
        if constexpr (kHasMin) dm[r] = weights.row_m(row0 + r)[sb];
      }
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) dx_values[t] =
          act.token_scale(t0 + t)[sb];
      const __m256 dx = token_lanes<kRows, kTokens>(dx_values);
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_lanes8<kRows * kTokens>(sums)),
                            _mm256_mul_ps(row_lanes<kRows, kTokens>(dw), dx), acc);
      if constexpr (kHasMin) {
        __m256i products[kQuantTilePairs] = {};
        SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
          SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
            products[t * kRows + r] = super256_min_products(
                _mm_loadu_si128(
                    reinterpret_cast<const __m128i*>(weights.row_mins(row0 + r) + sb * 16)),
                act.token_bsum(t0 + t) + sb * 16);
          }
        }
        min_acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_lanes8<kRows * kTokens>(products)),
                                  _mm256_mul_ps(row_lanes<kRows, kTokens>(dm), dx), min_acc);
      }
    }
    store_pairs<kRows, kTokens>(kHasMin ? _mm256_sub_ps(acc, min_acc) : acc, args.y, args.ldy);
  }
};

}  // namespace avx2_kernels

SLUICE_AVX2 void quant_dot_tile_avx2(const UnpackedWeights& weights, int row0, int num_rows,
                                     const QuantizedActivations& act, int64_t t0, int num_tokens,
                                     float* y, int64_t ldy) {
  dispatch_quant_family_tile<avx2_kernels::Block32Kernel, avx2_kernels::Super256Kernel>(
      num_rows, num_tokens, {weights, row0, act, t0, y, ldy});
}

}  // namespace sluice

#endif  // SLUICE_QUANT_X86
