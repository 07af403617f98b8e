// The AVX-512 VNNI direct kernel for Q6_K rows and 1-8 tokens (quant_direct_rows in
// cpu_quant_dot.h; Q4_K has its own, cpu_quant_k_rows_avx512.cpp): the rows are decoded from
// their GGUF blocks in registers, one row at a time, and the sixteen lanes of one register hold
// sixteen outputs (lane t * kRows + r: token t, row r) of a block of rows: 16 rows for one
// token, 8 x 2, 4 x 4 or 2 x 8.
//
// Every super-block ends in a float step per output (its integer sum times d_w * d_x,
// cpu_quant_dot.h), so each (row, token) pair's integer sum is reduced out of its register once
// per super-block: one tree reduces sixteen registers into the sixteen lanes of one, and the
// float step, d and the token-side d_x (laid out per lane once per call) then serve sixteen
// outputs per instruction. (Q6_K rows transposed into lanes as Q4_K's are measured slower here:
// six-bit values need more decoding per word and their sums fit 16 bits only eight elements
// at a time.)
//
// Per output the same operations as the scalar definition (cpu_quant_dot.cpp): exact integer
// sums, then acc = fma(float(S), d_w * d_x, acc) per super-block in order. Built with
// -ffp-contract=off like the other kernel files.
#include <algorithm>
#include <cstring>

#include "engine/backend/cpu/cpu_quant_dot_simd.h"
#include "engine/core/quant_blocks.h"

#if SLUICE_QUANT_X86

namespace sluice {

// A named namespace, not an anonymous one: see cpu_quant_dot_avx512.cpp.
namespace avx512_q6k_rows_kernels {

constexpr int kOutputs = 16;  // one zmm of int32 or float lanes

// Unrolls the loops over a block's rows, chunks and tokens completely, so that the sixteen
// accumulators stay in registers (see SLUICE_Q6K_UNROLL).
#define SLUICE_Q6K_UNROLL _Pragma("GCC unroll 16")

// The token side of a call: d_x per super-block sb and lane l (token l / kRows, the last token
// repeated past num_tokens), [num_super_blocks][16].
struct TokenLanes {
  AlignedArray<float> dx;

  void fill(const QuantizedActivations& act, int rows_per_token) {
    const int64_t num_super_blocks = act.cols / quant::kBlockK;
    dx.resize(static_cast<size_t>(num_super_blocks * kOutputs));
    for (int l = 0; l < kOutputs; ++l) {
      const int64_t t = std::min<int64_t>(l / rows_per_token, act.num_tokens - 1);
      for (int64_t sb = 0; sb < num_super_blocks; ++sb)
        dx[static_cast<size_t>(sb * kOutputs + l)] = act.token_scale(t)[sb];
    }
  }
};

// Lane l = the sum of the sixteen lanes of v[l] (exact integer sums, so any order).
SLUICE_AVX512_VNNI_INLINE __m512i sum_lanes16x16(const __m512i* v) {
  __m512i t[8];
  SLUICE_Q6K_UNROLL for (int i = 0; i < 8; ++i) {
    t[i] = _mm512_add_epi32(_mm512_unpacklo_epi32(v[2 * i], v[2 * i + 1]),
                            _mm512_unpackhi_epi32(v[2 * i], v[2 * i + 1]));
  }
  // u[j], 128 bits b: the sums over those 128 bits of v[4j..4j+3].
  __m512i u[4];
  SLUICE_Q6K_UNROLL for (int j = 0; j < 4; ++j) {
    u[j] = _mm512_add_epi32(_mm512_unpacklo_epi64(t[2 * j], t[2 * j + 1]),
                            _mm512_unpackhi_epi64(t[2 * j], t[2 * j + 1]));
  }
  __m512i x[2];
  SLUICE_Q6K_UNROLL for (int k = 0; k < 2; ++k) {
    x[k] = _mm512_add_epi32(_mm512_shuffle_i32x4(u[2 * k], u[2 * k + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                            _mm512_shuffle_i32x4(u[2 * k], u[2 * k + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  }
  return _mm512_add_epi32(_mm512_shuffle_i32x4(x[0], x[1], _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm512_shuffle_i32x4(x[0], x[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

// Lane l = 32-bit word k of the 16 bytes at row (l % kRows)'s pointer: each row's header read
// once, spread over its lanes by permutes.
template <int kRows>
SLUICE_AVX512_VNNI_INLINE void gather_words(const uint8_t* const* at, __m512i* words) {
  constexpr int kQuads = (kRows + 3) / 4;
  __m512i z[4];
  SLUICE_Q6K_UNROLL for (int q = 0; q < kQuads; ++q) {
    const auto load = [&](int j) {
      return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at[std::min(4 * q + j, kRows - 1)]));
    };
    z[q] = _mm512_inserti32x4(
        _mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(load(0)), load(1), 1), load(2),
                           2),
        load(3), 3);
  }
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i row = _mm512_and_si512(lane, _mm512_set1_epi32(kRows >= 8 ? 7 : kRows - 1));
  SLUICE_Q6K_UNROLL for (int k = 0; k < 4; ++k) {
    const __m512i idx = _mm512_add_epi32(_mm512_slli_epi32(row, 2), _mm512_set1_epi32(k));
    if constexpr (kRows <= 4) {
      words[k] = _mm512_permutexvar_epi32(idx, z[0]);
    } else if constexpr (kRows == 8) {
      words[k] = _mm512_permutex2var_epi32(z[0], idx, z[1]);
    } else {
      words[k] = _mm512_mask_blend_epi32(0xff00, _mm512_permutex2var_epi32(z[0], idx, z[1]),
                                         _mm512_permutex2var_epi32(z[2], idx, z[3]));
    }
  }
}

// The 16 halves in the low (shift 0) or high (shift 16) half of each lane, as floats (exact).
SLUICE_AVX512_VNNI_INLINE __m512 halves_to_float(__m512i words, int shift) {
  return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(words, shift)));
}

// Q6_K rows: half h of a super-block is chunks 2h (ql low nibbles with qh bits 0-1, 2-3) and
// 2h + 1 (high nibbles with bits 4-5, 6-7), less 32; lane l of chunk c is group 4c + l / 4 of
// 16. The activations arrive as q + 128 (wants_offset_activations).
struct Q6KRows {
  using Block = quant::BlockQ6_K;

  __m512 d;

  template <int kRows>
  SLUICE_AVX512_VNNI_INLINE void begin(const Block* const* blocks, int64_t sb) {
    // The 16 bytes that end with d (scales 2-15, then d): d is the high half of word 3.
    const uint8_t* at[kRows];
    SLUICE_Q6K_UNROLL for (int r = 0; r < kRows; ++r) {
      at[r] = reinterpret_cast<const uint8_t*>(&blocks[r][sb].d) - 14;
    }
    __m512i w[4];
    gather_words<kRows>(at, w);
    d = halves_to_float(w[3], 16);
  }

  SLUICE_AVX512_VNNI_INLINE static __m512i chunk(const Block& b, int c) {
    const int half = c / 2;
    const __m512i ql = _mm512_loadu_si512(b.ql + 64 * half);
    const __m512i qh = _mm512_broadcast_i64x4(loadu32(b.qh + 32 * half));
    // Bring each byte's two high bits to bits 4-5: bits 0-1 / 2-3 (c even) or 4-5 / 6-7 (c odd)
    // for the first / second 32 elements.
    __m512i low, high;
    if (c % 2 == 0) {
      low = ql;
      high = _mm512_sllv_epi16(
          qh, _mm512_set_epi64(0x0002000200020002, 0x0002000200020002, 0x0002000200020002,
                               0x0002000200020002, 0x0004000400040004, 0x0004000400040004,
                               0x0004000400040004, 0x0004000400040004));
    } else {
      low = _mm512_srli_epi16(ql, 4);
      high = _mm512_mask_srli_epi16(qh, 0xffff0000u, qh, 2);
    }
    const __m512i q = _mm512_and_si512(
        _mm512_ternarylogic_epi32(_mm512_set1_epi8(0x0f), low, high, 0xca), _mm512_set1_epi8(0x3f));
    return _mm512_sub_epi8(q, _mm512_set1_epi8(32));
  }

  // Row r's per-group scales of one super-block, sign-extended into the low 16 bits of each
  // lane (group g in lane g), for chunk_scales.
  static SLUICE_AVX512_VNNI_INLINE __m512i row_scales(const Block& b) {
    return _mm512_and_si512(
        _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales))),
        _mm512_set1_epi32(0xffff));
  }
};

// y[t * ldy + r] for the num_rows Q6_K rows at rows (at most kRows; the block computes kRows,
// the last row repeated) and the call's tokens (at most 16 / kRows).
template <int kRows>
SLUICE_AVX512_VNNI_INLINE void multiply_block(const uint8_t* rows, size_t row_bytes, int num_rows,
                                              int64_t num_super_blocks,
                                              const QuantizedActivations& act,
                                              const TokenLanes& lanes, float* y, int64_t ldy) {
  constexpr int kTokens = kOutputs / kRows;
  using Block = quant::BlockQ6_K;
  const Block* blocks[kRows];
  SLUICE_Q6K_UNROLL for (int r = 0; r < kRows; ++r) {
    blocks[r] = reinterpret_cast<const Block*>(
        rows + static_cast<size_t>(std::min(r, num_rows - 1)) * row_bytes);
  }
  const int8_t* a[kTokens];
  SLUICE_Q6K_UNROLL for (int t = 0; t < kTokens; ++t) {
    a[t] = act.token_qs(std::min<int64_t>(t, act.num_tokens - 1));
  }
  NextTilePrefetch prefetch;
  prefetch.next = rows + static_cast<size_t>(kRows) * row_bytes;
  prefetch.tile_bytes = static_cast<int64_t>(kRows * row_bytes);
  const __m512i zero = _mm512_setzero_si512();
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512 acc = _mm512_setzero_ps();
  Q6KRows src;
  for (int64_t sb = 0; sb < num_super_blocks; ++sb) {
    prefetch.prefetch(sb, num_super_blocks);
    src.begin<kRows>(blocks, sb);
    __m512i isum[kOutputs];
    SLUICE_Q6K_UNROLL for (int l = 0; l < kOutputs; ++l) isum[l] = zero;
    SLUICE_Q6K_UNROLL for (int r = 0; r < kRows; ++r) {
      const Block& b = blocks[r][sb];
      const __m512i group_scales = Q6KRows::row_scales(b);
      SLUICE_Q6K_UNROLL for (int c = 0; c < 4; ++c) {
        const __m512i w = Q6KRows::chunk(b, c);
        const __m512i lane_group =
            _mm512_add_epi32(_mm512_set1_epi32(4 * c),
                             _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0));
        const __m512i scale = _mm512_permutexvar_epi32(lane_group, group_scales);
        // The weights' 128 * sum(w) per lane, taken off the offset activations' sums.
        const __m512i minus_correction =
            _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, offset, w));
        SLUICE_Q6K_UNROLL for (int t = 0; t < kTokens; ++t) {
          const __m512i x = _mm512_load_si512(a[t] + sb * quant::kBlockK + c * kQuantChunk);
          // Every lane's sum fits in 16 bits (4 * 32 * 127), so vpdpwssd against (scale, 0)
          // multiplies it by the scale and accumulates.
          isum[t * kRows + r] = _mm512_dpwssd_epi32(
              isum[t * kRows + r], _mm512_dpbusd_epi32(minus_correction, x, w), scale);
        }
      }
    }
    const __m512 dx = _mm512_load_ps(lanes.dx.data() + sb * kOutputs);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum_lanes16x16(isum)), _mm512_mul_ps(src.d, dx), acc);
  }
  alignas(64) float out[kOutputs];
  _mm512_store_ps(out, acc);
  const int num_tokens = static_cast<int>(std::min<int64_t>(kTokens, act.num_tokens));
  for (int t = 0; t < num_tokens; ++t) {
    for (int r = 0; r < num_rows; ++r) y[t * ldy + r] = out[t * kRows + r];
  }
}

template <int kRows>
SLUICE_AVX512_VNNI void multiply_rows(const uint8_t* data, size_t row_bytes, int64_t row_begin,
                                      int64_t row_end, int64_t cols,
                                      const QuantizedActivations& act, float* y, int64_t ldy) {
  thread_local TokenLanes lanes;
  lanes.fill(act, kRows);
  const int64_t num_super_blocks = cols / quant::kBlockK;
  for (int64_t r = row_begin; r < row_end; r += kRows) {
    const auto num_rows = static_cast<int>(std::min<int64_t>(kRows, row_end - r));
    multiply_block<kRows>(data + static_cast<size_t>(r) * row_bytes, row_bytes, num_rows,
                          num_super_blocks, act, lanes, y + r, ldy);
  }
}

}  // namespace avx512_q6k_rows_kernels

void quant_direct_rows_q6k_avx512_vnni(const uint8_t* data, size_t row_bytes, int64_t row_begin,
                                       int64_t row_end, int64_t cols,
                                       const QuantizedActivations& act, float* y, int64_t ldy) {
  using avx512_q6k_rows_kernels::multiply_rows;
  if (act.num_tokens == 1) {
    multiply_rows<16>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
  } else if (act.num_tokens == 2) {
    multiply_rows<8>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
  } else if (act.num_tokens <= 4) {
    multiply_rows<4>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
  } else {
    multiply_rows<2>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
  }
}

}  // namespace sluice

#endif  // SLUICE_QUANT_X86
