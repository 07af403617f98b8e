// The AVX-512 VNNI version of the quantized dot-product tiles (cpu_quant_dot.h gives the order
// of operations; cpu_quant_dot.cpp's scalar version is its definition). vpdpbusd multiplies
// unsigned by signed bytes: weights with a min (never negative) are the unsigned operand; for
// the others the activations arrive as q + 128 and each weight chunk's 128 * sum(w) is taken off
// again. Weights and activations of a chunk are loaded once and used for every (row, token)
// pair of the tile.
#include "engine/backend/cpu_quant_dot_simd.h"

#if SLUICE_QUANT_X86

#define SLUICE_AVX512_VNNI \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,fma")))
#define SLUICE_AVX512_VNNI_INLINE SLUICE_AVX512_VNNI SLUICE_QUANT_INLINE

namespace sluice {

// A named namespace, not an anonymous one: the kernels instantiate the shared dispatch
// templates (cpu_quant_dot_simd.h), and GCC gives those instantiations the same mangled name in
// both SIMD files when the kernels live in anonymous namespaces, so an unoptimised build linked
// the AVX2 kernels into the AVX-512 entry point.
namespace avx512_vnni_kernels {

SLUICE_AVX512_VNNI_INLINE float tree16(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  return quant_lane_tree16(lanes);
}

// [p[0] x 8, p[1] x 8]: the scales of the two blocks of a chunk, one per lane.
SLUICE_AVX512_VNNI_INLINE __m512 block_pair(const float* p) {
  const __m512i index = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  return _mm512_permutexvar_ps(index, _mm512_maskz_loadu_ps(0x3, p));
}

// [p[0], 0 x 7, p[1], 0 x 7]: a per-block term that goes to the first lane of each half.
SLUICE_AVX512_VNNI_INLINE __m512 block_pair_first_lanes(const float* p) {
  const __m512i index = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  return _mm512_maskz_permutexvar_ps(0x0101, index, _mm512_maskz_loadu_ps(0x3, p));
}

template <bool kHasMin>
struct Block32Kernel {
  template <int kRows, int kTokens>
  SLUICE_AVX512_VNNI static void run(const QuantTileArgs& args) {
    const QuantTilePointers<kRows, kTokens> p(args);
    const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
    const __m512i zero = _mm512_setzero_si512();
    __m512 acc[kRows][kTokens];
    SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) acc[r][t] = _mm512_setzero_ps();
    }
    const int64_t num_chunks = args.weights.w_stride / kQuantChunk;
    for (int64_t c = 0; c < num_chunks; ++c) {
      __m512i w[kRows];
      __m512i minus_correction[kRows];  // -128 * (sum of each lane's four weights)
      __m512 dw[kRows];
      __m512 mw[kRows];
      SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
        w[r] = _mm512_load_si512(p.w[r] + c * kQuantChunk);
        if constexpr (!kHasMin) {
          minus_correction[r] = _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, offset, w[r]));
        }
        dw[r] = block_pair(p.d[r] + 2 * c);
        if constexpr (kHasMin) mw[r] = block_pair_first_lanes(p.m[r] + 2 * c);
      }
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
        const __m512i a = _mm512_load_si512(p.a[t] + c * kQuantChunk);
        const __m512 dx = block_pair(p.dx[t] + 2 * c);
        __m512 sx;
        if constexpr (kHasMin) sx = block_pair_first_lanes(p.sx[t] + 2 * c);
        SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
          // Weights with a min are never negative: they are the unsigned operand, and the
          // activations keep their sign. The others take q + 128 activations and the weights'
          // 128 * sum(w) off again.
          const __m512i sum = kHasMin ? _mm512_dpbusd_epi32(zero, w[r], a)
                                      : _mm512_dpbusd_epi32(minus_correction[r], a, w[r]);
          const __m512 dd = _mm512_mul_ps(dw[r], dx);
          acc[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), dd, acc[r][t]);
          if constexpr (kHasMin) acc[r][t] = _mm512_fmadd_ps(mw[r], sx, acc[r][t]);
        }
      }
    }
    SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
      SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) args.y[t * args.ldy + r] =
          tree16(acc[r][t]);
    }
  }
};

template <bool kHasMin>
struct Super256Kernel {
  template <int kRows, int kTokens>
  SLUICE_AVX512_VNNI static void run(const QuantTileArgs& args) {
    const QuantTilePointers<kRows, kTokens> p(args);
    const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
    const __m512i low_half = _mm512_set1_epi32(0xffff);
    const __m512i zero = _mm512_setzero_si512();
    __m512 acc[kRows][kTokens];
    __m256 min_acc[kRows][kTokens];
    SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
        acc[r][t] = _mm512_setzero_ps();
        min_acc[r][t] = _mm256_setzero_ps();
      }
    }
    const int64_t num_super_blocks = args.weights.cols / quant::kBlockK;
    for (int64_t sb = 0; sb < num_super_blocks; ++sb) {
      __m512i isum[kRows][kTokens];
      __m512i correction[kRows];
      __m512i group_scale[kRows];  // the 16 scales of the super-block, in their low 16 bits
      SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
        correction[r] = zero;
        SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) isum[r][t] = zero;
        const __m128i bytes =
            _mm_load_si128(reinterpret_cast<const __m128i*>(p.group_scale[r] + sb * 16));
        group_scale[r] = _mm512_and_si512(_mm512_cvtepi8_epi32(bytes), low_half);
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
          w[r] = _mm512_load_si512(p.w[r] + e);
          scale[r] = _mm512_permutexvar_epi32(lane_group, group_scale[r]);
          // Every lane's byte sum fits in 16 bits for the K-quants (|w| <= 32, 4 * 255 * 32 <
          // 2^15), so vpdpwssd against (scale, 0) multiplies it by the scale and accumulates.
          // Weights with a min are never negative and need no correction (as in Block32Kernel).
          if constexpr (!kHasMin) {
            correction[r] = _mm512_dpwssd_epi32(correction[r],
                                                _mm512_dpbusd_epi32(zero, offset, w[r]), scale[r]);
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
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
        const float dx = p.dx[t][sb];
        SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
          const float dd = p.d[r][sb] * dx;
          const __m512 isum_f = _mm512_cvtepi32_ps(
              kHasMin ? isum[r][t] : _mm512_sub_epi32(isum[r][t], correction[r]));
          acc[r][t] = _mm512_fmadd_ps(isum_f, _mm512_set1_ps(dd), acc[r][t]);
          if constexpr (kHasMin) {
            min_acc[r][t] = add_super256_min_term(min_acc[r][t], p.mins[r] + sb * 16,
                                                  p.bsum[t] + sb * 16, p.m[r][sb] * dx);
          }
        }
      }
    }
    SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
      SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
        const float sum = tree16(acc[r][t]);
        args.y[t * args.ldy + r] = kHasMin ? sum - quant_lane_tree8(min_acc[r][t]) : sum;
      }
    }
  }
};

}  // namespace avx512_vnni_kernels

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
