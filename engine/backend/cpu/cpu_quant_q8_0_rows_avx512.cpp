// The AVX-512 VNNI direct kernel for Q8_0 rows and 2-8 tokens (quant_direct_rows in
// cpu_quant_dot.h; one token keeps quant_direct_wide): sixteen rows at a time in the lanes of a
// register, read straight from their blocks, as Q4_K's rows are (cpu_quant_k_rows_avx512.cpp).
//
// Each block of 32 ends in a float step per output (its integer sum times d_w * d_x), so the
// row-per-lane layout pays off most here: the sixteen rows' 32 bytes of a block are transposed
// so that lane r of register k holds row r's elements 4k..4k+3, one vpdpbusd multiplies four
// elements of all sixteen rows by four activations of a token (broadcast), and the block's
// integer sum of every row ends in its own lane: no reduction, and the float step (and d_w,
// gathered into the lanes once per block) serves sixteen rows per instruction. The activations
// arrive as q + 128 (wants_offset_activations): the rows' 128 * sum(w) per block is taken off
// once for every token.
//
// Per output the same operations as the scalar definition (cpu_quant_dot.cpp): exact integer
// sums, then acc = fma(float(S_b), d_w * d_x, acc) per block in order. (The scalar version's
// padding block past an odd count, zero values with a zero scale, adds fma(0, 0, acc) = acc
// exactly, since acc starts at +0 and never becomes -0: this kernel skips it.) Built with
// -ffp-contract=off like the other kernel files.
#include <algorithm>
#include <cstring>

#include "engine/backend/cpu/cpu_quant_dot_simd.h"
#include "engine/backend/cpu/cpu_quant_lanes_avx512.h"
#include "engine/core/quant_blocks.h"

#if SLUICE_QUANT_X86

namespace sluice {

// A named namespace, not an anonymous one: see cpu_quant_dot_avx512.cpp.
namespace avx512_q8_0_rows_kernels {

constexpr int kRows = 16;  // one zmm of int32 or float lanes

// Unrolls the loops over a block's tokens and words completely, so that the accumulators and
// transposed words stay in registers (see SLUICE_QUANT_UNROLL).
#define SLUICE_Q8_0_ROWS_UNROLL _Pragma("GCC unroll 16")

// Four activations of a token as vpdpbusd's broadcast operand.
SLUICE_AVX512_VNNI_INLINE __m512i broadcast4(const int8_t* x) {
  int32_t four;
  std::memcpy(&four, x, sizeof four);
  return _mm512_set1_epi32(four);
}

// y[t * ldy + r] for the num_rows (<= 16) Q8_0 rows at rows and the kTokens tokens of act.
template <int kTokens>
SLUICE_AVX512_VNNI void q8_0_block(const uint8_t* rows, size_t row_bytes, int num_rows,
                                   int64_t num_blocks, const QuantizedActivations& act, float* y,
                                   int64_t ldy) {
  using Block = quant::BlockQ8_0;
  const Block* blocks[kRows];
  SLUICE_Q8_0_ROWS_UNROLL for (int r = 0; r < kRows; ++r) {
    blocks[r] = reinterpret_cast<const Block*>(
        rows + static_cast<size_t>(std::min(r, num_rows - 1)) * row_bytes);
  }
  NextTilePrefetch prefetch;
  prefetch.next = rows + static_cast<size_t>(kRows) * row_bytes;
  prefetch.tile_bytes = static_cast<int64_t>(kRows * row_bytes);
  // Lane r: the byte offset of row r's blocks (rows past num_rows repeat the last one), for the
  // gather of the scales.
  alignas(64) int32_t offsets[kRows];
  SLUICE_Q8_0_ROWS_UNROLL for (int r = 0; r < kRows; ++r) {
    offsets[r] = static_cast<int32_t>(static_cast<size_t>(std::min(r, num_rows - 1)) * row_bytes);
  }
  const __m512i row_offset = _mm512_load_si512(offsets);
  const int8_t* x[kTokens];
  const float* dx[kTokens];
  SLUICE_Q8_0_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) {
    x[t] = act.token_qs(t);
    dx[t] = act.token_scale(t);
  }
  const __m512i zero = _mm512_setzero_si512();
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512 acc[kTokens];  // lane r: row r
  SLUICE_Q8_0_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < num_blocks; ++b) {
    prefetch.prefetch(b, num_blocks);
    __m512i raw[8];  // rows p and 8 + p
    SLUICE_Q8_0_ROWS_UNROLL for (int p = 0; p < 8; ++p) {
      raw[p] = _mm512_inserti64x4(_mm512_castsi256_si512(loadu32(blocks[p][b].qs)),
                                  loadu32(blocks[p + 8][b].qs), 1);
    }
    __m512i w[8];  // w[k], lane r: row r's elements 4k..4k+3
    avx512_lanes::transpose_rows16x8(raw, w);
    // Lane r: d of row r's block b in its low 16 bits.
    const __m512i d_words = _mm512_i32gather_epi32(row_offset, rows + b * sizeof(Block), 1);
    const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(d_words));
    __m512i correction = zero;  // 128 * (the sum of each row's 32 weights)
    SLUICE_Q8_0_ROWS_UNROLL for (int k = 0; k < 8; ++k) {
      correction = _mm512_dpbusd_epi32(correction, offset, w[k]);
    }
    const __m512i minus_correction = _mm512_sub_epi32(zero, correction);
    SLUICE_Q8_0_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) {
      const int8_t* xb = x[t] + b * quant::kBlock32;
      __m512i sum = minus_correction;
      SLUICE_Q8_0_ROWS_UNROLL for (int k = 0; k < 8; ++k) {
        sum = _mm512_dpbusd_epi32(sum, broadcast4(xb + 4 * k), w[k]);
      }
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(d, _mm512_set1_ps(dx[t][b])),
                               acc[t]);
    }
  }
  const auto mask = static_cast<__mmask16>((1u << num_rows) - 1);
  SLUICE_Q8_0_ROWS_UNROLL for (int t = 0; t < kTokens; ++t) {
    _mm512_mask_storeu_ps(y + t * ldy, mask, acc[t]);
  }
}

using BlockKernel = void (*)(const uint8_t*, size_t, int, int64_t, const QuantizedActivations&,
                             float*, int64_t);
constexpr BlockKernel kBlockKernels[8] = {q8_0_block<1>, q8_0_block<2>, q8_0_block<3>,
                                          q8_0_block<4>, q8_0_block<5>, q8_0_block<6>,
                                          q8_0_block<7>, q8_0_block<8>};

}  // namespace avx512_q8_0_rows_kernels

void quant_direct_rows_q8_0_avx512_vnni(const uint8_t* data, size_t row_bytes, int64_t row_begin,
                                        int64_t row_end, int64_t cols,
                                        const QuantizedActivations& act, float* y, int64_t ldy) {
  using namespace avx512_q8_0_rows_kernels;
  const int64_t num_blocks = cols / quant::kBlock32;
  const BlockKernel kernel = kBlockKernels[act.num_tokens - 1];
  for (int64_t r = row_begin; r < row_end; r += kRows) {
    const auto num_rows = static_cast<int>(std::min<int64_t>(kRows, row_end - r));
    kernel(data + static_cast<size_t>(r) * row_bytes, row_bytes, num_rows, num_blocks, act, y + r,
           ldy);
  }
}

}  // namespace sluice

#endif  // SLUICE_QUANT_X86
