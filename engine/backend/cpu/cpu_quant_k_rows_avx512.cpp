// The AVX-512 VNNI direct kernel for Q4_K and Q6_K rows and 1-8 tokens (quant_direct_rows in
// cpu_quant_dot.h): the rows are decoded from their GGUF blocks in registers, and the sixteen
// lanes of one register hold sixteen outputs (lane t * kRows + r: token t, row r) of a block of
// rows: 16 rows for one token, 8 x 2, 4 x 4 or 2 x 8.
//
// Why sixteen outputs at a time: every super-block ends in float steps per output (its integer
// sum times d_w * d_x, cpu_quant_dot.h), so each (row, token) pair's integer sum has to be
// reduced out of its register once per super-block. One tree reduces sixteen registers into the
// sixteen lanes of one (3 instructions per output), and every float step, the super-blocks'
// scales and mins and the token-side values (d_x and the Q8_K group sums, laid out per lane once
// per call) then serve sixteen outputs with one instruction. The 2-row tiles of
// cpu_quant_dot_avx512.cpp reduce and scale each pair on its own, and decode a row once per four
// tokens.
//
// Per output the same operations as the scalar definition (cpu_quant_dot.cpp): exact integer
// sums, then acc = fma(float(S), d_w * d_x, acc) and, for Q4_K, min_acc = fma(float(M),
// dmin_w * d_x, min_acc) per super-block in order; output acc - min_acc. Built with
// -ffp-contract=off like the other kernel files.
#include <algorithm>
#include <cstring>

#include "engine/backend/cpu/cpu_quant_dot_simd.h"
#include "engine/core/quant_blocks.h"

#if SLUICE_QUANT_X86

namespace sluice {

// A named namespace, not an anonymous one: see cpu_quant_dot_avx512.cpp.
namespace avx512_k_rows_kernels {

constexpr int kOutputs = 16;                     // one zmm of int32 or float lanes
constexpr char kZero = static_cast<char>(0x80);  // a vpshufb index that writes 0

// Unrolls the loops over a block's rows, chunks and tokens completely, so that the sixteen
// accumulators stay in registers (see SLUICE_QUANT_UNROLL).
#define SLUICE_K_ROWS_UNROLL _Pragma("GCC unroll 16")

// The token side of a call, per super-block sb and lane l (token l / kRows, the last token
// repeated past num_tokens): d_x, and for Q4_K the pairs (bs_2i, bs_2i+1) of the sums of 32
// activations (bs_j = bsum_2j + bsum_2j+1, |bs_j| <= 2 * 16 * 127) as int16 in one int32.
struct TokenLanes {
  AlignedArray<float> dx;       // [num_super_blocks][16]
  AlignedArray<int32_t> pairs;  // [num_super_blocks][4][16]

  void fill(const QuantizedActivations& act, int rows_per_token, bool has_min) {
    const int64_t num_super_blocks = act.cols / quant::kBlockK;
    dx.resize(static_cast<size_t>(num_super_blocks * kOutputs));
    pairs.resize(has_min ? static_cast<size_t>(num_super_blocks * 4 * kOutputs) : 0);
    for (int l = 0; l < kOutputs; ++l) {
      const int64_t t = std::min<int64_t>(l / rows_per_token, act.num_tokens - 1);
      for (int64_t sb = 0; sb < num_super_blocks; ++sb) {
        dx[static_cast<size_t>(sb * kOutputs + l)] = act.token_scale(t)[sb];
        if (!has_min) continue;
        const int16_t* bsum = act.token_bsum(t) + sb * 16;
        for (int i = 0; i < 4; ++i) {
          const auto low = static_cast<uint16_t>(bsum[4 * i] + bsum[4 * i + 1]);
          const auto high = static_cast<uint16_t>(bsum[4 * i + 2] + bsum[4 * i + 3]);
          pairs[static_cast<size_t>((sb * 4 + i) * kOutputs + l)] =
              static_cast<int32_t>(uint32_t{low} | uint32_t{high} << 16);
        }
      }
    }
  }
};

// Lane l = the sum of the sixteen lanes of v[l] (exact integer sums, so any order).
SLUICE_AVX512_VNNI_INLINE __m512i sum_lanes16x16(const __m512i* v) {
  __m512i t[8];
  SLUICE_QUANT_UNROLL for (int i = 0; i < 8; ++i) {
    t[i] = _mm512_add_epi32(_mm512_unpacklo_epi32(v[2 * i], v[2 * i + 1]),
                            _mm512_unpackhi_epi32(v[2 * i], v[2 * i + 1]));
  }
  // u[j], 128 bits b: the sums over those 128 bits of v[4j..4j+3].
  __m512i u[4];
  SLUICE_QUANT_UNROLL for (int j = 0; j < 4; ++j) {
    u[j] = _mm512_add_epi32(_mm512_unpacklo_epi64(t[2 * j], t[2 * j + 1]),
                            _mm512_unpackhi_epi64(t[2 * j], t[2 * j + 1]));
  }
  __m512i x[2];
  SLUICE_QUANT_UNROLL for (int k = 0; k < 2; ++k) {
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
  SLUICE_QUANT_UNROLL for (int q = 0; q < kQuads; ++q) {
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
  SLUICE_QUANT_UNROLL for (int k = 0; k < 4; ++k) {
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

// Q4_K rows: chunk c is the low nibbles of qs[32c..32c+31], then the high ones (elements
// 64c..64c+63 in order), and lanes 0-7 / 8-15 of a chunk are groups 2c / 2c + 1 of 32.
struct Q4KRows {
  static constexpr bool kHasMin = true;
  using Block = quant::BlockQ4_K;

  // Per super-block, lane l (row l % kRows): d, dmin, the scales of groups 0-3 / 4-7 and the
  // mins of groups 0-3 / 4-7 one byte each (ggml's get_scale_min_k4 layout, decoded as in
  // scales_mins_k4_bytes).
  __m512 d, dmin;
  __m512i scales03, scales47, mins03, mins47;

  template <int kRows>
  SLUICE_AVX512_VNNI_INLINE void begin(const Block* const* blocks, int64_t sb) {
    const uint8_t* at[kRows];
    SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
      at[r] = reinterpret_cast<const uint8_t*>(blocks[r] + sb);
    }
    __m512i w[4];  // d | dmin << 16, then scale bytes 0-3, 4-7, 8-11
    gather_words<kRows>(at, w);
    d = halves_to_float(w[0], 0);
    dmin = halves_to_float(w[0], 16);
    const __m512i low6 = _mm512_set1_epi8(0x3f);
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    scales03 = _mm512_and_si512(w[1], low6);
    mins03 = _mm512_and_si512(w[2], low6);
    // Groups 4-7: a nibble of bytes 8-11 with the top two bits of bytes 0-3 (scales) or 4-7
    // (mins) above it: 0xca takes the second operand where the first (the mask) is set, else the
    // third.
    scales47 = _mm512_and_si512(
        _mm512_ternarylogic_epi32(low4, w[3], _mm512_srli_epi32(w[1], 2), 0xca), low6);
    mins47 = _mm512_and_si512(_mm512_ternarylogic_epi32(low4, _mm512_srli_epi32(w[3], 4),
                                                        _mm512_srli_epi32(w[2], 2), 0xca),
                              low6);
  }

  SLUICE_AVX512_VNNI_INLINE static __m512i chunk(const Block& b, int c) {
    const __m512i q = _mm512_broadcast_i64x4(loadu32(b.qs + 32 * c));
    return _mm512_and_si512(_mm512_mask_srli_epi16(q, 0xffff0000u, q, 4), _mm512_set1_epi8(0x0f));
  }

  // Row r's scale of each lane's group in chunk c, in the low 16 bits of the lane.
  SLUICE_AVX512_VNNI_INLINE __m512i chunk_scales(int r, int c) const {
    const __m512i row_scales =
        _mm512_permutexvar_epi32(_mm512_set1_epi32(r), c < 2 ? scales03 : scales47);
    const char b0 = static_cast<char>(2 * (c % 2));
    const char b1 = static_cast<char>(b0 + 1);
    const char z = kZero;
    const __m512i pick =
        _mm512_set_epi8(z, z, z, b1, z, z, z, b1, z, z, z, b1, z, z, z, b1, z, z, z, b1, z, z, z,
                        b1, z, z, z, b1, z, z, z, b1, z, z, z, b0, z, z, z, b0, z, z, z, b0, z, z,
                        z, b0, z, z, z, b0, z, z, z, b0, z, z, z, b0, z, z, z, b0);
    return _mm512_shuffle_epi8(row_scales, pick);
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

  // Lane l: M = sum over the 8 groups of min * (sum of the group's 32 activations).
  SLUICE_AVX512_VNNI_INLINE __m512i min_sums(const int32_t* pairs) const {
    __m512i sum = _mm512_setzero_si512();
    SLUICE_QUANT_UNROLL for (int i = 0; i < 4; ++i) {
      // Bytes b and b + 1 of each lane's mins word (groups 2i, 2i + 1), zero-extended to 16 bits
      // each (vpshufb picks within 128 bits: lane k of them starts at byte 4k).
      const int b = 2 * (i % 2);
      const __m512i pick = _mm512_broadcast_i32x4(
          _mm_setr_epi8(static_cast<char>(b), kZero, static_cast<char>(b + 1), kZero,
                        static_cast<char>(4 + b), kZero, static_cast<char>(5 + b), kZero,
                        static_cast<char>(8 + b), kZero, static_cast<char>(9 + b), kZero,
                        static_cast<char>(12 + b), kZero, static_cast<char>(13 + b), kZero));
      const __m512i mins = _mm512_shuffle_epi8(i < 2 ? mins03 : mins47, pick);
      sum = _mm512_dpwssd_epi32(sum, mins, _mm512_load_si512(pairs + i * kOutputs));
    }
    return sum;
  }
};

// Q6_K rows: half h of a super-block is chunks 2h (ql low nibbles with qh bits 0-1, 2-3) and
// 2h + 1 (high nibbles with bits 4-5, 6-7), less 32; lane l of chunk c is group 4c + l / 4 of
// 16. The activations arrive as q + 128 (wants_offset_activations).
struct Q6KRows {
  static constexpr bool kHasMin = false;
  using Block = quant::BlockQ6_K;

  __m512 d, dmin;

  template <int kRows>
  SLUICE_AVX512_VNNI_INLINE void begin(const Block* const* blocks, int64_t sb) {
    // The 16 bytes that end with d (scales 2-15, then d): d is the high half of word 3.
    const uint8_t* at[kRows];
    SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) {
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

// y[t * ldy + r] for the num_rows rows at rows (at most kRows; the block computes kRows, the
// last row repeated) and the call's tokens (at most 16 / kRows).
template <typename Rows, int kRows>
SLUICE_AVX512_VNNI_INLINE void multiply_block(const uint8_t* rows, size_t row_bytes, int num_rows,
                                              int64_t num_super_blocks,
                                              const QuantizedActivations& act,
                                              const TokenLanes& lanes, float* y, int64_t ldy) {
  constexpr int kTokens = kOutputs / kRows;
  using Block = typename Rows::Block;
  const Block* blocks[kRows];
  SLUICE_K_ROWS_UNROLL for (int r = 0; r < kRows; ++r) {
    blocks[r] = reinterpret_cast<const Block*>(
        rows + static_cast<size_t>(std::min(r, num_rows - 1)) * row_bytes);
  }
  const int8_t* a[kTokens];
  SLUICE_K_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) {
    a[t] = act.token_qs(std::min<int64_t>(t, act.num_tokens - 1));
  }
  NextTilePrefetch prefetch;
  prefetch.next = rows + static_cast<size_t>(kRows) * row_bytes;
  prefetch.tile_bytes = static_cast<int64_t>(kRows * row_bytes);
  const __m512i zero = _mm512_setzero_si512();
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512 acc = _mm512_setzero_ps();
  __m512 min_acc = _mm512_setzero_ps();
  Rows src;
  for (int64_t sb = 0; sb < num_super_blocks; ++sb) {
    prefetch.prefetch(sb, num_super_blocks);
    src.template begin<kRows>(blocks, sb);
    __m512i isum[kOutputs];
    SLUICE_K_ROWS_UNROLL for (int l = 0; l < kOutputs; ++l) isum[l] = zero;
    SLUICE_K_ROWS_UNROLL for (int r = 0; r < kRows; ++r) {
      const Block& b = blocks[r][sb];
      __m512i group_scales = zero;
      if constexpr (!Rows::kHasMin) group_scales = Rows::row_scales(b);
      SLUICE_K_ROWS_UNROLL for (int c = 0; c < 4; ++c) {
        const __m512i w = Rows::chunk(b, c);
        __m512i scale;
        __m512i minus_correction = zero;
        if constexpr (Rows::kHasMin) {
          scale = src.chunk_scales(r, c);
        } else {
          const __m512i lane_group =
              _mm512_add_epi32(_mm512_set1_epi32(4 * c),
                               _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0));
          scale = _mm512_permutexvar_epi32(lane_group, group_scales);
          // The weights' 128 * sum(w) per lane, taken off the offset activations' sums.
          minus_correction = _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, offset, w));
        }
        SLUICE_K_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) {
          const __m512i x = _mm512_load_si512(a[t] + sb * quant::kBlockK + c * kQuantChunk);
          // Every lane's sum fits in 16 bits (4 * 15 * 127 for Q4_K, 4 * 32 * 127 for Q6_K),
          // so vpdpwssd against (scale, 0) multiplies it by the scale and accumulates.
          const __m512i sum = Rows::kHasMin ? _mm512_dpbusd_epi32(zero, w, x)
                                            : _mm512_dpbusd_epi32(minus_correction, x, w);
          isum[t * kRows + r] = _mm512_dpwssd_epi32(isum[t * kRows + r], sum, scale);
        }
      }
    }
    const __m512 dx = _mm512_load_ps(lanes.dx.data() + sb * kOutputs);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum_lanes16x16(isum)), _mm512_mul_ps(src.d, dx), acc);
    if constexpr (Rows::kHasMin) {
      const __m512i m = src.min_sums(lanes.pairs.data() + sb * 4 * kOutputs);
      min_acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(m), _mm512_mul_ps(src.dmin, dx), min_acc);
    }
  }
  alignas(64) float out[kOutputs];
  _mm512_store_ps(out, Rows::kHasMin ? _mm512_sub_ps(acc, min_acc) : acc);
  const int num_tokens = static_cast<int>(std::min<int64_t>(kTokens, act.num_tokens));
  for (int t = 0; t < num_tokens; ++t) {
    for (int r = 0; r < num_rows; ++r) y[t * ldy + r] = out[t * kRows + r];
  }
}

template <typename Rows, int kRows>
SLUICE_AVX512_VNNI void multiply_rows(const uint8_t* data, size_t row_bytes, int64_t row_begin,
                                      int64_t row_end, int64_t cols,
                                      const QuantizedActivations& act, float* y, int64_t ldy) {
  thread_local TokenLanes lanes;
  lanes.fill(act, kRows, Rows::kHasMin);
  const int64_t num_super_blocks = cols / quant::kBlockK;
  for (int64_t r = row_begin; r < row_end; r += kRows) {
    const auto num_rows = static_cast<int>(std::min<int64_t>(kRows, row_end - r));
    multiply_block<Rows, kRows>(data + static_cast<size_t>(r) * row_bytes, row_bytes, num_rows,
                                num_super_blocks, act, lanes, y + r, ldy);
  }
}

template <typename Rows>
void multiply_rows_for_tokens(const uint8_t* data, size_t row_bytes, int64_t row_begin,
                              int64_t row_end, int64_t cols, const QuantizedActivations& act,
                              float* y, int64_t ldy) {
  if (act.num_tokens == 1) {
    multiply_rows<Rows, 16>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
  } else if (act.num_tokens == 2) {
    multiply_rows<Rows, 8>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
  } else if (act.num_tokens <= 4) {
    multiply_rows<Rows, 4>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
  } else {
    multiply_rows<Rows, 2>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
  }
}

// ---- Q4_K: sixteen rows in the lanes of a register, any 1-8 tokens.
//
// The sixteen rows' 32 bytes of a chunk are transposed (16 x 8 words) so that lane r of
// register k holds row r's bytes 4k..4k+3; their low nibbles are elements 4k..4k+3 of the chunk
// (group 2c of 32) and their high nibbles elements 32 + 4k.. (group 2c + 1). One vpdpbusd then
// multiplies four elements of all sixteen rows by the same four activations of a token
// (broadcast), and a row's integer sum ends in its own lane: no reduction, and the float steps
// take sixteen rows at once. Sixteen elements' sums fit in 16 bits (16 * 15 * 127), so each is
// multiplied by its group's scale and accumulated by one vpdpwssd.

// Lane r of out[k] = 32-bit word k of in[r % 8]'s 256-bit half r / 8, for 8 registers whose low
// halves are rows 0-7 and high halves rows 8-15 (two 8 x 8 transposes side by side).
SLUICE_AVX512_VNNI_INLINE void transpose_rows16x8(const __m512i* in, __m512i* out) {
  __m512i t[8], u[8];
  SLUICE_K_ROWS_UNROLL for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(in[2 * i], in[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(in[2 * i], in[2 * i + 1]);
  }
  // u[4i + k], 128 bits j: word 4j' + k of rows 4i..4i+3 (j' the 128 bits within the half).
  SLUICE_K_ROWS_UNROLL for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  // Rows 0-3 with rows 4-7 (and 8-11 with 12-15): words 0-3 from the first 128 bits of each
  // half, words 4-7 from the second.
  const __m512i first = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
  const __m512i second = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
  SLUICE_K_ROWS_UNROLL for (int k = 0; k < 4; ++k) {
    out[k] = _mm512_permutex2var_epi64(u[k], first, u[4 + k]);
    out[4 + k] = _mm512_permutex2var_epi64(u[k], second, u[4 + k]);
  }
}

// Each lane's byte b (of its own 32-bit word), zero-extended to 32 bits.
SLUICE_AVX512_VNNI_INLINE __m512i lane_byte(__m512i v, int b) {
  const auto at = [&](int k) { return static_cast<char>(4 * k + b); };
  return _mm512_shuffle_epi8(v, _mm512_broadcast_i32x4(_mm_setr_epi8(
                                    at(0), kZero, kZero, kZero, at(1), kZero, kZero, kZero, at(2),
                                    kZero, kZero, kZero, at(3), kZero, kZero, kZero)));
}

// Per call: token t's pairs of sums of 32 activations, (bs_2i, bs_2i+1) as int16 in one int32,
// [num_tokens][num_super_blocks][4].
struct TokenPairs {
  AlignedArray<int32_t> pairs;

  void fill(const QuantizedActivations& act) {
    const int64_t num_super_blocks = act.cols / quant::kBlockK;
    pairs.resize(static_cast<size_t>(act.num_tokens * num_super_blocks * 4));
    for (int64_t t = 0; t < act.num_tokens; ++t) {
      const int16_t* bsum = act.token_bsum(t);
      for (int64_t i = 0; i < num_super_blocks * 4; ++i) {
        const auto low = static_cast<uint16_t>(bsum[4 * i] + bsum[4 * i + 1]);
        const auto high = static_cast<uint16_t>(bsum[4 * i + 2] + bsum[4 * i + 3]);
        pairs[static_cast<size_t>(t * num_super_blocks * 4 + i)] =
            static_cast<int32_t>(uint32_t{low} | uint32_t{high} << 16);
      }
    }
  }
  const int32_t* token(int64_t t, int64_t num_super_blocks) const {
    return pairs.data() + t * num_super_blocks * 4;
  }
};

// y[t * ldy + r] for the num_rows (<= 16) Q4_K rows at rows and kTokens tokens.
template <int kTokens>
SLUICE_AVX512_VNNI_INLINE void q4k_lanes_block(const uint8_t* rows, size_t row_bytes, int num_rows,
                                               int64_t num_super_blocks,
                                               const QuantizedActivations& act,
                                               const TokenPairs& token_pairs, float* y,
                                               int64_t ldy) {
  using Block = quant::BlockQ4_K;
  const Block* blocks[kOutputs];
  SLUICE_K_ROWS_UNROLL for (int r = 0; r < kOutputs; ++r) {
    blocks[r] = reinterpret_cast<const Block*>(
        rows + static_cast<size_t>(std::min(r, num_rows - 1)) * row_bytes);
  }
  const int8_t* a[kTokens];
  const float* dx[kTokens];
  const int32_t* pairs[kTokens];
  SLUICE_K_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) {
    a[t] = act.token_qs(t);
    dx[t] = act.token_scale(t);
    pairs[t] = token_pairs.token(t, num_super_blocks);
  }
  NextTilePrefetch prefetch;
  prefetch.next = rows + static_cast<size_t>(kOutputs) * row_bytes;
  prefetch.tile_bytes = static_cast<int64_t>(kOutputs * row_bytes);
  const __m512i zero = _mm512_setzero_si512();
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  // Lane r: row r's outputs (kept in memory: the chunk loop needs the registers).
  alignas(64) float acc[kTokens][kOutputs] = {};
  alignas(64) float min_acc[kTokens][kOutputs] = {};
  Q4KRows src;
  for (int64_t sb = 0; sb < num_super_blocks; ++sb) {
    prefetch.prefetch(sb, num_super_blocks);
    src.begin<kOutputs>(blocks, sb);
    __m512i isum[kTokens];
    SLUICE_K_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) isum[t] = zero;
    SLUICE_K_ROWS_UNROLL for (int c = 0; c < 4; ++c) {
      __m512i raw[8];
      SLUICE_K_ROWS_UNROLL for (int p = 0; p < 8; ++p) {
        raw[p] = _mm512_inserti64x4(_mm512_castsi256_si512(loadu32(blocks[p][sb].qs + 32 * c)),
                                    loadu32(blocks[p + 8][sb].qs + 32 * c), 1);
      }
      __m512i q[8];
      transpose_rows16x8(raw, q);
      __m512i w[16];  // w[k]: elements 4k..4k+3 of the chunk, lane r = row r
      SLUICE_K_ROWS_UNROLL for (int k = 0; k < 8; ++k) {
        w[k] = _mm512_and_si512(q[k], low4);
        w[8 + k] = _mm512_and_si512(_mm512_srli_epi16(q[k], 4), low4);
      }
      const __m512i scale[2] = {lane_byte(c < 2 ? src.scales03 : src.scales47, 2 * (c % 2)),
                                lane_byte(c < 2 ? src.scales03 : src.scales47, 2 * (c % 2) + 1)};
      SLUICE_K_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) {
        const int8_t* x = a[t] + sb * quant::kBlockK + c * kQuantChunk;
        SLUICE_K_ROWS_UNROLL for (int h = 0; h < 4; ++h) {  // 16 elements of group 2c + h / 2
          __m512i sum = zero;
          SLUICE_K_ROWS_UNROLL for (int k = 4 * h; k < 4 * h + 4; ++k) {
            int32_t four;
            std::memcpy(&four, x + 4 * k, sizeof four);
            sum = _mm512_dpbusd_epi32(sum, w[k], _mm512_set1_epi32(four));
          }
          isum[t] = _mm512_dpwssd_epi32(isum[t], sum, scale[h / 2]);
        }
      }
    }
    SLUICE_K_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) {
      const __m512 dxt = _mm512_set1_ps(dx[t][sb]);
      _mm512_store_ps(acc[t], _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]),
                                              _mm512_mul_ps(src.d, dxt), _mm512_load_ps(acc[t])));
      __m512i m = zero;
      SLUICE_K_ROWS_UNROLL for (int i = 0; i < 4; ++i) {
        m = _mm512_dpwssd_epi32(m, src.min_pair(i), _mm512_set1_epi32(pairs[t][sb * 4 + i]));
      }
      _mm512_store_ps(min_acc[t],
                      _mm512_fmadd_ps(_mm512_cvtepi32_ps(m), _mm512_mul_ps(src.dmin, dxt),
                                      _mm512_load_ps(min_acc[t])));
    }
  }
  const auto mask = static_cast<__mmask16>((1u << num_rows) - 1);
  SLUICE_K_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) {
    _mm512_mask_storeu_ps(y + t * ldy, mask,
                          _mm512_sub_ps(_mm512_load_ps(acc[t]), _mm512_load_ps(min_acc[t])));
  }
}

template <int kTokens>
SLUICE_AVX512_VNNI void q4k_lanes_rows(const uint8_t* data, size_t row_bytes, int64_t row_begin,
                                       int64_t row_end, int64_t cols,
                                       const QuantizedActivations& act, float* y, int64_t ldy) {
  thread_local TokenPairs token_pairs;
  token_pairs.fill(act);
  const int64_t num_super_blocks = cols / quant::kBlockK;
  for (int64_t r = row_begin; r < row_end; r += kOutputs) {
    const auto num_rows = static_cast<int>(std::min<int64_t>(kOutputs, row_end - r));
    q4k_lanes_block<kTokens>(data + static_cast<size_t>(r) * row_bytes, row_bytes, num_rows,
                             num_super_blocks, act, token_pairs, y + r, ldy);
  }
}

void q4k_lanes_for_tokens(const uint8_t* data, size_t row_bytes, int64_t row_begin, int64_t row_end,
                          int64_t cols, const QuantizedActivations& act, float* y, int64_t ldy) {
  switch (act.num_tokens) {
    case 1:
      return q4k_lanes_rows<1>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
    case 2:
      return q4k_lanes_rows<2>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
    case 3:
      return q4k_lanes_rows<3>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
    case 4:
      return q4k_lanes_rows<4>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
    case 5:
      return q4k_lanes_rows<5>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
    case 6:
      return q4k_lanes_rows<6>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
    case 7:
      return q4k_lanes_rows<7>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
    default:
      return q4k_lanes_rows<8>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
  }
}

}  // namespace avx512_k_rows_kernels

bool has_direct_rows_kernel_avx512_vnni(DType dtype) {
  return dtype == DType::Q4_K || dtype == DType::Q6_K;
}

void quant_direct_rows_avx512_vnni(DType dtype, const uint8_t* data, size_t row_bytes,
                                   int64_t row_begin, int64_t row_end, int64_t cols,
                                   const QuantizedActivations& act, float* y, int64_t ldy) {
  using namespace avx512_k_rows_kernels;
  if (dtype == DType::Q4_K) {
    q4k_lanes_for_tokens(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
  } else if (dtype == DType::Q6_K) {
    multiply_rows_for_tokens<Q6KRows>(data, row_bytes, row_begin, row_end, cols, act, y, ldy);
  }
}

}  // namespace sluice

#endif  // SLUICE_QUANT_X86
