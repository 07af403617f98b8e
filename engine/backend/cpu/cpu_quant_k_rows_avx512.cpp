// The AVX-512 VNNI direct kernel for Q4_K rows and 1-32 tokens (quant_direct_rows in
// cpu_quant_dot.h; Q6_K's is cpu_quant_q6k_rows_avx512.cpp): sixteen rows at a time in the
// lanes of a register, decoded from their GGUF blocks in registers, for eight tokens at a time.
//
// The sixteen rows' bytes of a chunk (64 elements) are transposed so that lane r of register k
// holds row r's elements 4k..4k+3. One vpdpbusd then multiplies four elements of all sixteen
// rows by the same four activations of a token (broadcast), and each row's integer sum of a
// super-block ends in its own lane: no reduction, a chunk is decoded once for every token, and
// the float steps, scales and mins take sixteen rows per instruction. Each group's partial sum
// is multiplied by its scale and accumulated by one vpdpwssd, which needs it in 16 bits: sixteen
// elements at a time (16 * 15 * 127).
//
// Per output the same operations as the scalar definition (cpu_quant_dot.cpp): exact integer
// sums, then acc = fma(float(S), d_w * d_x, acc) and, for Q4_K, min_acc = fma(float(M),
// dmin_w * d_x, min_acc) per super-block in order; output acc - min_acc. Built with
// -ffp-contract=off like the other kernel files.
#include <algorithm>
#include <cstring>

#include "engine/backend/cpu/cpu_quant_dot_simd.h"
#include "engine/backend/cpu/cpu_quant_lanes_avx512.h"
#include "engine/core/quant_blocks.h"

#if SLUICE_QUANT_X86

namespace sluice {

// A named namespace, not an anonymous one: see cpu_quant_dot_avx512.cpp.
namespace avx512_k_rows_kernels {

constexpr int kRows = 16;       // one zmm of int32 or float lanes
constexpr int kTokenGroup = 8;  // tokens a block of rows is multiplied by at a time
constexpr char kZero = static_cast<char>(0x80);  // a vpshufb index that writes 0

// Unrolls the loops over a block's chunks, tokens and words completely, so that the
// accumulators and decoded words stay in registers (see SLUICE_QUANT_UNROLL).
#define SLUICE_K_ROWS_UNROLL _Pragma("GCC unroll 16")

// Lane r = 32-bit word k of the 16 bytes at at[r]: each row's 16 bytes read once, then spread
// over the lanes by permutes (four rows per register, two-source permutes and a blend).
SLUICE_AVX512_VNNI_INLINE void gather_words(const uint8_t* const* at, __m512i* words) {
  __m512i z[4];  // z[q], 128 bits j: row 4q + j
  SLUICE_K_ROWS_UNROLL for (int q = 0; q < 4; ++q) {
    const auto load = [&](int j) {
      return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at[4 * q + j]));
    };
    z[q] = _mm512_inserti32x4(
        _mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(load(0)), load(1), 1), load(2),
                           2),
        load(3), 3);
  }
  SLUICE_K_ROWS_UNROLL for (int k = 0; k < 4; ++k) {
    // Lanes 0-7 from z[0], z[1] and lanes 8-15 from z[2], z[3]: word k of row r % 8 of the pair.
    const __m512i idx = _mm512_add_epi32(
        _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28),
        _mm512_set1_epi32(k));
    words[k] = _mm512_mask_blend_epi32(0xff00, _mm512_permutex2var_epi32(z[0], idx, z[1]),
                                       _mm512_permutex2var_epi32(z[2], idx, z[3]));
  }
}

// Each lane's byte b (of its own 32-bit word), zero-extended to 32 bits.
SLUICE_AVX512_VNNI_INLINE __m512i lane_byte(__m512i v, int b) {
  const auto at = [&](int k) { return static_cast<char>(4 * k + b); };
  return _mm512_shuffle_epi8(v, _mm512_broadcast_i32x4(_mm_setr_epi8(
                                    at(0), kZero, kZero, kZero, at(1), kZero, kZero, kZero, at(2),
                                    kZero, kZero, kZero, at(3), kZero, kZero, kZero)));
}

// The 16 halves in the low (shift 0) or high (shift 16) half of each lane, as floats (exact).
SLUICE_AVX512_VNNI_INLINE __m512 halves_to_float(__m512i words, int shift) {
  return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(words, shift)));
}

// Four activations of a token as vpdpbusd's broadcast operand.
SLUICE_AVX512_VNNI_INLINE __m512i broadcast4(const int8_t* x) {
  int32_t four;
  std::memcpy(&four, x, sizeof four);
  return _mm512_set1_epi32(four);
}

// The sixteen rows of a block (rows past num_rows repeat the last one) and where the next
// block's bytes start, for the prefetch.
template <typename Block>
struct RowBlock : NextTilePrefetch {
  const Block* blocks[kRows];

  RowBlock(const uint8_t* rows, size_t row_bytes, int num_rows) {
    for (int r = 0; r < kRows; ++r) {
      blocks[r] = reinterpret_cast<const Block*>(
          rows + static_cast<size_t>(std::min(r, num_rows - 1)) * row_bytes);
    }
    next = rows + static_cast<size_t>(kRows) * row_bytes;
    tile_bytes = static_cast<int64_t>(kRows * row_bytes);
  }
};

// ---- Q4_K: a chunk c is the low nibbles of qs[32c..32c+31], then the high ones; lanes 0-7 of
// it are group 2c of 32 elements, 8-15 group 2c + 1. The rows' 32 bytes are transposed (16 x 8
// words), so low and high nibbles of register k are the chunk's words k and 8 + k.

// A super-block of the sixteen rows, lane r = row r: d, dmin, the scales of groups 0-3 / 4-7
// and the mins of groups 0-3 / 4-7 one byte each (ggml's get_scale_min_k4 layout, decoded as
// scales_mins_k4_bytes does).
struct Q4KHeader {
  __m512 d, dmin;
  __m512i scales03, scales47, mins03, mins47;

  SLUICE_AVX512_VNNI_INLINE Q4KHeader(const quant::BlockQ4_K* const* blocks, int64_t sb) {
    const uint8_t* at[kRows];
    SLUICE_K_ROWS_UNROLL for (int r = 0; r < kRows; ++r) {
      at[r] = reinterpret_cast<const uint8_t*>(blocks[r] + sb);
    }
    __m512i w[4];  // d | dmin << 16, then scale bytes 0-3, 4-7, 8-11
    gather_words(at, w);
    d = halves_to_float(w[0], 0);
    dmin = halves_to_float(w[0], 16);
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

// Per call: each token's pairs of sums of 32 activations, (bs_2i, bs_2i+1) as int16 in one
// int32 (bs_j = bsum_2j + bsum_2j+1, |bs_j| <= 2 * 16 * 127), [num_tokens][super-blocks][4]:
// the right operand of the min products.
struct TokenPairs {
  AlignedArray<int32_t> pairs;
  int64_t num_super_blocks = 0;

  void fill(const QuantizedActivations& act) {
    num_super_blocks = act.cols / quant::kBlockK;
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
  const int32_t* token(int64_t t) const { return pairs.data() + t * num_super_blocks * 4; }
};

// y[t * ldy + r] for the num_rows (<= 16) Q4_K rows at rows and the kTokens tokens from t0.
template <int kTokens>
SLUICE_AVX512_VNNI_INLINE void q4k_block(const uint8_t* rows, size_t row_bytes, int num_rows,
                                         int64_t num_super_blocks, const QuantizedActivations& act,
                                         const TokenPairs& token_pairs, int64_t t0, float* y,
                                         int64_t ldy) {
  const RowBlock<quant::BlockQ4_K> block(rows, row_bytes, num_rows);
  const quant::BlockQ4_K* const* blocks = block.blocks;
  const __m512i zero = _mm512_setzero_si512();
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  // Lane r: row r's outputs (in memory: the chunk loop needs the registers).
  alignas(64) float acc[kTokens][kRows] = {};
  alignas(64) float min_acc[kTokens][kRows] = {};
  for (int64_t sb = 0; sb < num_super_blocks; ++sb) {
    block.prefetch(sb, num_super_blocks);
    const Q4KHeader header(blocks, sb);
    __m512i isum[kTokens];
    SLUICE_K_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) isum[t] = zero;
    SLUICE_K_ROWS_UNROLL for (int c = 0; c < 4; ++c) {
      __m512i raw[8];  // rows p and 8 + p
      SLUICE_K_ROWS_UNROLL for (int p = 0; p < 8; ++p) {
        raw[p] = _mm512_inserti64x4(_mm512_castsi256_si512(loadu32(blocks[p][sb].qs + 32 * c)),
                                    loadu32(blocks[p + 8][sb].qs + 32 * c), 1);
      }
      __m512i q[8];
      avx512_lanes::transpose_rows16x8(raw, q);
      __m512i w[16];  // w[k]: elements 4k..4k+3 of the chunk
      SLUICE_K_ROWS_UNROLL for (int k = 0; k < 8; ++k) {
        w[k] = _mm512_and_si512(q[k], low4);
        w[8 + k] = _mm512_and_si512(_mm512_srli_epi16(q[k], 4), low4);
      }
      const __m512i scale[2] = {header.scale(2 * c), header.scale(2 * c + 1)};
      SLUICE_K_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) {
        const int8_t* x = act.token_qs(t0 + t) + sb * quant::kBlockK + c * kQuantChunk;
        SLUICE_K_ROWS_UNROLL for (int h = 0; h < 4; ++h) {  // 16 elements of group 2c + h / 2
          __m512i sum = zero;
          SLUICE_K_ROWS_UNROLL for (int k = 4 * h; k < 4 * h + 4; ++k) {
            sum = _mm512_dpbusd_epi32(sum, w[k], broadcast4(x + 4 * k));
          }
          isum[t] = _mm512_dpwssd_epi32(isum[t], sum, scale[h / 2]);
        }
      }
    }
    SLUICE_K_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) {
      const __m512 dx = _mm512_set1_ps(act.token_scale(t0 + t)[sb]);
      _mm512_store_ps(acc[t], _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]),
                                              _mm512_mul_ps(header.d, dx), _mm512_load_ps(acc[t])));
      const int32_t* pairs = token_pairs.token(t0 + t) + sb * 4;
      __m512i m = zero;
      SLUICE_K_ROWS_UNROLL for (int i = 0; i < 4; ++i) {
        m = _mm512_dpwssd_epi32(m, header.min_pair(i), _mm512_set1_epi32(pairs[i]));
      }
      _mm512_store_ps(min_acc[t],
                      _mm512_fmadd_ps(_mm512_cvtepi32_ps(m), _mm512_mul_ps(header.dmin, dx),
                                      _mm512_load_ps(min_acc[t])));
    }
  }
  const auto mask = static_cast<__mmask16>((1u << num_rows) - 1);
  SLUICE_K_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) {
    _mm512_mask_storeu_ps(y + (t0 + t) * ldy, mask,
                          _mm512_sub_ps(_mm512_load_ps(acc[t]), _mm512_load_ps(min_acc[t])));
  }
}

// The kTokens tokens from t0 for one block of rows.
template <int kTokens>
SLUICE_AVX512_VNNI void q4k_block_tokens(const uint8_t* rows, size_t row_bytes, int num_rows,
                                         int64_t num_super_blocks, const QuantizedActivations& act,
                                         const TokenPairs& token_pairs, int64_t t0, float* y,
                                         int64_t ldy) {
  q4k_block<kTokens>(rows, row_bytes, num_rows, num_super_blocks, act, token_pairs, t0, y, ldy);
}

using BlockTokens = void (*)(const uint8_t*, size_t, int, int64_t, const QuantizedActivations&,
                             const TokenPairs&, int64_t, float*, int64_t);
constexpr BlockTokens kBlockTokens[kTokenGroup] = {
    q4k_block_tokens<1>, q4k_block_tokens<2>, q4k_block_tokens<3>, q4k_block_tokens<4>,
    q4k_block_tokens<5>, q4k_block_tokens<6>, q4k_block_tokens<7>, q4k_block_tokens<8>};

}  // namespace avx512_k_rows_kernels

bool has_direct_rows_kernel_avx512_vnni(DType dtype) {
  return dtype == DType::Q4_K || dtype == DType::Q6_K || dtype == DType::Q8_0;
}

int direct_rows_max_tokens_avx512_vnni(DType dtype) {
  // Q4_K: every block of 16 rows is read from memory once and multiplied by the tokens eight at
  // a time while it sits in L1 (decoded again per eight; the panels win past 32 tokens). Q6_K
  // and Q8_0: 8.
  return dtype == DType::Q4_K ? 32 : 8;
}

void quant_direct_rows_avx512_vnni(DType dtype, const uint8_t* data, size_t row_bytes,
                                   int64_t row_begin, int64_t row_end, int64_t cols,
                                   const QuantizedActivations& act, float* y, int64_t ldy) {
  using namespace avx512_k_rows_kernels;
  if (dtype == DType::Q6_K) {
    return quant_direct_rows_q6k_avx512_vnni(data, row_bytes, row_begin, row_end, cols, act, y,
                                             ldy);
  }
  if (dtype == DType::Q8_0) {
    return quant_direct_rows_q8_0_avx512_vnni(data, row_bytes, row_begin, row_end, cols, act, y,
                                              ldy);
  }
  thread_local TokenPairs token_pairs;
  token_pairs.fill(act);
  const int64_t num_super_blocks = cols / quant::kBlockK;
  for (int64_t r = row_begin; r < row_end; r += kRows) {
    const auto num_rows = static_cast<int>(std::min<int64_t>(kRows, row_end - r));
    const uint8_t* rows = data + static_cast<size_t>(r) * row_bytes;
    for (int64_t t0 = 0; t0 < act.num_tokens; t0 += kTokenGroup) {
      const auto num_tokens = static_cast<int>(std::min<int64_t>(kTokenGroup, act.num_tokens - t0));
      kBlockTokens[num_tokens - 1](rows, row_bytes, num_rows, num_super_blocks, act, token_pairs,
                                   t0, y + r, ldy);
    }
  }
}

}  // namespace sluice

#endif  // SLUICE_QUANT_X86
