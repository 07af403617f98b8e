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
#include "engine/backend/cpu/cpu_quant_q4k_lanes_avx512.h"
#include "engine/core/quant_blocks.h"

#if SLUICE_QUANT_X86

namespace sluice {

// A named namespace, not an anonymous one: see cpu_quant_dot_avx512.cpp.
namespace avx512_k_rows_kernels {

using namespace avx512_q4k_lanes;

constexpr int kTokenGroup = 8;  // tokens a block of rows is multiplied by at a time

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

// y[t * ldy + r] for the num_rows (<= 16) Q4_K rows at rows and the kTokens tokens from t0.
template <int kTokens>
SLUICE_AVX512_VNNI_INLINE void q4k_block(const uint8_t* rows, size_t row_bytes, int num_rows,
                                         int64_t num_super_blocks, const QuantizedActivations& act,
                                         const TokenPairs& token_pairs, int64_t t0, float* y,
                                         int64_t ldy) {
  const RowBlock<quant::BlockQ4_K> block(rows, row_bytes, num_rows);
  const quant::BlockQ4_K* const* blocks = block.blocks;
  // Lane r: row r's outputs (in memory: the chunk loop needs the registers).
  alignas(64) float acc[kTokens][kRows] = {};
  alignas(64) float min_acc[kTokens][kRows] = {};
  for (int64_t sb = 0; sb < num_super_blocks; ++sb) {
    block.prefetch(sb, num_super_blocks);
    const uint8_t* at[kRows];
    SLUICE_K_ROWS_UNROLL for (int r = 0; r < kRows; ++r) {
      at[r] = reinterpret_cast<const uint8_t*>(blocks[r] + sb);
    }
    __m512i words[4];  // d | dmin << 16, then scale bytes 0-3, 4-7, 8-11
    gather_words(at, words);
    const Q4KHeader header(words);
    __m512i isum[kTokens];
    SLUICE_K_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) isum[t] = _mm512_setzero_si512();
    SLUICE_K_ROWS_UNROLL for (int c = 0; c < 4; ++c) {
      __m512i raw[8];  // rows p and 8 + p
      SLUICE_K_ROWS_UNROLL for (int p = 0; p < 8; ++p) {
        raw[p] = _mm512_inserti64x4(_mm512_castsi256_si512(loadu32(blocks[p][sb].qs + 32 * c)),
                                    loadu32(blocks[p + 8][sb].qs + 32 * c), 1);
      }
      __m512i q[8];
      avx512_lanes::transpose_rows16x8(raw, q);
      chunk_products<kTokens>(q, header, c, act, t0, sb, isum);
    }
    finish_super_block<kTokens>(header, isum, act, token_pairs, t0, sb, acc, min_acc);
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
