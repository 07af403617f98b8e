// The transposes that put sixteen weight rows into the lanes of a register, shared by
// the AVX-512 VNNI kernels that keep one row per lane (cpu_quant_k_rows_avx512.cpp for Q4_K,
// cpu_quant_q8_0_rows_avx512.cpp for Q8_0). Internal to those files.
#pragma once

#include "engine/backend/cpu/cpu_quant_dot_simd.h"

#if SLUICE_QUANT_X86

namespace sluice::avx512_lanes {

// Lane r of out[k] = 32-bit word k of in[r % 8]'s 256-bit half r / 8, for 8 registers whose low
// halves are rows 0-7 and high halves rows 8-15 (two 8 x 8 transposes side by side).
SLUICE_AVX512_VNNI_INLINE void transpose_rows16x8(const __m512i* in, __m512i* out) {
  __m512i t[8], u[8];
  SLUICE_QUANT_UNROLL for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(in[2 * i], in[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(in[2 * i], in[2 * i + 1]);
  }
  // u[4i + k], 128 bits j: word 4j' + k of rows 4i..4i+3 (j' the 128 bits within the half).
  SLUICE_QUANT_UNROLL for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  // Rows 0-3 with rows 4-7 (and 8-11 with 12-15): words 0-3 from the first 128 bits of each
  // half, words 4-7 from the second.
  const __m512i first = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
  const __m512i second = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
  SLUICE_QUANT_UNROLL for (int k = 0; k < 4; ++k) {
    out[k] = _mm512_permutex2var_epi64(u[k], first, u[4 + k]);
    out[4 + k] = _mm512_permutex2var_epi64(u[k], second, u[4 + k]);
  }
}

}  // namespace sluice::avx512_lanes

#endif  // SLUICE_QUANT_X86
