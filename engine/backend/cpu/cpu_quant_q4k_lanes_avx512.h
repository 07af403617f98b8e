// Q4_K with sixteen rows in the lanes of each register (lane r = row r), the arithmetic shared
// by the AVX-512 VNNI kernels that hold its rows so: cpu_quant_k_rows_avx512.cpp (rows
// transposed into lanes on every product) and cpu_quant_interleaved_avx512.cpp (tiles made so at
// load). From a super-block's words to each row's output, in the scalar definition's order
// (cpu_quant_dot.h). Internal to those files.
#pragma once

#include <cstring>

#include "engine/backend/cpu/cpu_quant_dot_simd.h"
#include "engine/backend/cpu/cpu_quant_interleaved_sums.h"
#include "engine/core/quant_blocks.h"

#if SLUICE_QUANT_X86

namespace sluice::avx512_q4k_lanes {

constexpr int kRows = 16;                        // one zmm of int32 or float lanes
constexpr char kZero = static_cast<char>(0x80);  // a vpshufb index that writes 0

// Unrolls the loops over a chunk's words and tokens completely, so that the decoded words and
// accumulators stay in registers.
#define SLUICE_Q4K_LANES_UNROLL _Pragma("GCC unroll 16")

// Each lane's byte b (of its own 32-bit word), zero-extended to 32 bits.
SLUICE_AVX512_VNNI_INLINE __m512i lane_byte(__m512i v, int b) {
  const auto at = [&](int k) { return static_cast<char>(4 * k + b); };
  return _mm512_shuffle_epi8(v, _mm512_broadcast_i32x4(_mm_setr_epi8(
                                    at(0), kZero, kZero, kZero, at(1), kZero, kZero, kZero, at(2),
                                    kZero, kZero, kZero, at(3), kZero, kZero, kZero)));
}

// Four activations of a token as vpdpbusd's broadcast operand.
SLUICE_AVX512_VNNI_INLINE __m512i broadcast4(const int8_t* x) {
  int32_t four;
  std::memcpy(&four, x, sizeof four);
  return _mm512_set1_epi32(four);
}

// A super-block of the sixteen rows: d, dmin, the scales of groups 0-3 / 4-7 and the mins of
// groups 0-3 / 4-7 one byte each (ggml's get_scale_min_k4 layout, decoded as
// scales_mins_k4_bytes does), from the block's first four words in lanes: d | dmin << 16, then
// scale bytes 0-3, 4-7 and 8-11.
struct Q4KHeader {
  __m512 d, dmin;
  __m512i scales03, scales47, mins03, mins47;

  SLUICE_AVX512_VNNI_INLINE explicit Q4KHeader(const __m512i* w) {
    d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(w[0]));
    dmin = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(w[0], 16)));
    const __m512i low6 = _mm512_set1_epi8(0x3f);
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    scales03 = _mm512_and_si512(w[1], low6);
    mins03 = _mm512_and_si512(w[2], low6);
    // Groups 4-7: a nibble of bytes 8-11 with the top two bits of bytes 0-3 (scales) or 4-7
    // (mins) above it: 0xca takes the second operand where the first (the mask) is set, else
    // the third.
    scales47 = _mm512_and_si512(
        _mm512_ternarylogic_epi32(low4, w[3], _mm512_srli_epi32(w[1], 2), 0xca), low6);
    mins47 = _mm512_and_si512(_mm512_ternarylogic_epi32(low4, _mm512_srli_epi32(w[3], 4),
                                                        _mm512_srli_epi32(w[2], 2), 0xca),
                              low6);
  }

  // Each lane's scale of group g, zero-extended.
  SLUICE_AVX512_VNNI_INLINE __m512i scale(int g) const {
    return lane_byte(g < 4 ? scales03 : scales47, g % 4);
  }

  // Each lane's mins of groups 2i and 2i + 1, zero-extended to 16 bits each.
  SLUICE_AVX512_VNNI_INLINE __m512i min_pair(int i) const {
    const int b = 2 * (i % 2);
    const __m512i pick = _mm512_broadcast_i32x4(
        _mm_setr_epi8(static_cast<char>(b), kZero, static_cast<char>(b + 1), kZero,
                      static_cast<char>(4 + b), kZero, static_cast<char>(5 + b), kZero,
                      static_cast<char>(8 + b), kZero, static_cast<char>(9 + b), kZero,
                      static_cast<char>(12 + b), kZero, static_cast<char>(13 + b), kZero));
    return _mm512_shuffle_epi8(i < 2 ? mins03 : mins47, pick);
  }
};

// Per call: each token's pairs of sums of 32 activations (fill_q4k_pairs), the right operand of
// the min products.
struct TokenPairs {
  TokenSums sums;

  void fill(const QuantizedActivations& act) { fill_q4k_pairs(act, sums); }
  const int32_t* token(int64_t t) const { return sums.token(t); }
};

// Chunk c (64 elements) of super-block sb for kTokens tokens from t0: q[k] holds each row's
// 32-bit word k of the chunk's 32 quant bytes (low nibbles elements 0-31, high 32-63); each
// group of 16's integer sum times its scale is added to isum[t] by one vpdpwssd, which needs
// the sum in 16 bits (16 * 15 * 127 fits).
template <int kTokens>
SLUICE_AVX512_VNNI_INLINE void chunk_products(const __m512i* q, const Q4KHeader& header, int c,
                                              const QuantizedActivations& act, int64_t t0,
                                              int64_t sb, __m512i* isum) {
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  __m512i w[16];  // w[k]: elements 4k..4k+3 of the chunk
  SLUICE_Q4K_LANES_UNROLL for (int k = 0; k < 8; ++k) {
    w[k] = _mm512_and_si512(q[k], low4);
    w[8 + k] = _mm512_and_si512(_mm512_srli_epi16(q[k], 4), low4);
  }
  const __m512i scale[2] = {header.scale(2 * c), header.scale(2 * c + 1)};
  SLUICE_Q4K_LANES_UNROLL for (int t = 0; t < kTokens; ++t) {
    const int8_t* x = act.token_qs(t0 + t) + sb * quant::kBlockK + c * kQuantChunk;
    SLUICE_Q4K_LANES_UNROLL for (int h = 0; h < 4; ++h) {  // 16 elements of group 2c + h / 2
      __m512i sum = _mm512_setzero_si512();
      SLUICE_Q4K_LANES_UNROLL for (int k = 4 * h; k < 4 * h + 4; ++k) {
        sum = _mm512_dpbusd_epi32(sum, w[k], broadcast4(x + 4 * k));
      }
      isum[t] = _mm512_dpwssd_epi32(isum[t], sum, scale[h / 2]);
    }
  }
}

// The float steps of super-block sb for kTokens tokens from t0, lane r = row r:
// acc = fma(float(S), d * d_x, acc) and min_acc = fma(float(M), dmin * d_x, min_acc).
template <int kTokens>
SLUICE_AVX512_VNNI_INLINE void finish_super_block(const Q4KHeader& header, const __m512i* isum,
                                                  const QuantizedActivations& act,
                                                  const TokenPairs& token_pairs, int64_t t0,
                                                  int64_t sb, float (*acc)[kRows],
                                                  float (*min_acc)[kRows]) {
  SLUICE_Q4K_LANES_UNROLL for (int t = 0; t < kTokens; ++t) {
    const __m512 dx = _mm512_set1_ps(act.token_scale(t0 + t)[sb]);
    _mm512_store_ps(acc[t], _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]),
                                            _mm512_mul_ps(header.d, dx), _mm512_load_ps(acc[t])));
    const int32_t* pairs = token_pairs.token(t0 + t) + sb * 4;
    __m512i m = _mm512_setzero_si512();
    SLUICE_Q4K_LANES_UNROLL for (int i = 0; i < 4; ++i) {
      m = _mm512_dpwssd_epi32(m, header.min_pair(i), _mm512_set1_epi32(pairs[i]));
    }
    _mm512_store_ps(min_acc[t],
                    _mm512_fmadd_ps(_mm512_cvtepi32_ps(m), _mm512_mul_ps(header.dmin, dx),
                                    _mm512_load_ps(min_acc[t])));
  }
}

}  // namespace sluice::avx512_q4k_lanes

#endif  // SLUICE_QUANT_X86
