// The AVX-512 VNNI kernels for interleaved rows (cpu_quant_interleave.h): sixteen rows in the
// lanes of every register, read from their tiles with whole-register loads, for 1-8 tokens at a
// time. The same arithmetic as the row kernels (cpu_quant_k_rows_avx512.cpp, cpu_quant_q8_0_rows_
// avx512.cpp) without their transposes, and with the weights as vpdpbusd's unsigned operand so
// that the activations stay signed:
//  - Q4_K: the quants are unsigned already; scales, mins and the sums of activation pairs as in
//    the row kernel.
//  - Q6_K: q in 0..63 is multiplied as it is; each group's 32 * scale * (sum of its 16
//    activations) is taken off once per super-block (the q - 32 of the definition).
//  - Q8_0: the tiles hold q + 128; each block's 128 * (sum of its activations) is taken off.
// The integer sums are exact, so every output is the scalar definition's (cpu_quant_dot.h) bit
// for bit: acc = fma(float(S), d_w * d_x, acc) per block or super-block in order, and Q4_K's
// acc - min_acc. Built with -ffp-contract=off like the other kernel files.
#include <algorithm>
#include <cstring>

#include "engine/backend/cpu/cpu_quant_dot_simd.h"
#include "engine/backend/cpu/cpu_quant_interleave.h"
#include "engine/backend/cpu/cpu_quant_interleaved_sums.h"
#include "engine/backend/cpu/cpu_quant_q4k_lanes_avx512.h"
#include "engine/core/quant_blocks.h"

#if SLUICE_QUANT_X86

namespace sluice {

// A named namespace, not an anonymous one: see cpu_quant_dot_avx512.cpp.
namespace avx512_interleaved_kernels {

constexpr int kRows = kInterleaveRows;  // one zmm of int32 or float lanes
constexpr int kTokenGroup = 8;          // tokens a group's tiles are multiplied by at a time
// How far ahead of the tile being multiplied its cache lines are asked for, by the kernels that
// ask (Q4_K and Q6_K: 1 token over 512 MB of rows on a 2-core Zen 5 VM, 42 -> 58 GB/s for Q4_K,
// 36 -> 60 for Q6_K; Q8_0, whose small tiles take few instructions, streams faster without:
// 49 -> 56 GB/s).
constexpr size_t kPrefetchBytes = 8192;

// Unrolls the loops over a tile's words and tokens completely, so that the decoded words and
// accumulators stay in registers.
#define SLUICE_INTERLEAVED_UNROLL _Pragma("GCC unroll 16")

SLUICE_AVX512_VNNI_INLINE __m512i load(const uint8_t* p) {
  return _mm512_loadu_si512(p);
}

using avx512_q4k_lanes::broadcast4;

// Asks for the cache lines of a tile's bytes kPrefetchBytes ahead.
SLUICE_AVX512_VNNI_INLINE void prefetch_ahead(const uint8_t* tile, size_t tile_bytes) {
  const uint8_t* ahead = tile + kPrefetchBytes;
  for (size_t at = 0; at < tile_bytes; at += 64)
    _mm_prefetch(reinterpret_cast<const char*>(ahead + at), _MM_HINT_T0);
}

// Lane r's sixteen halves at p (one per row), as floats.
SLUICE_AVX512_VNNI_INLINE __m512 halves(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// What a call's kernels read besides the tiles and activations: Q4_K's pairs of activation sums
// or the sums Q6_K and Q8_0 take off.
struct Sums {
  avx512_q4k_lanes::TokenPairs q4k_pairs;
  TokenSums other;
};

// ---- Q4_K. Tile: d | dmin << 16 (one word per row), the 12 scale bytes (3 words), then the
// 128 quant bytes (32 words: chunk c of 64 elements is words 8c..8c+7, low nibbles elements
// 0-31 of the chunk, high nibbles 32-63).
constexpr size_t kQ4KScales = 64, kQ4KQuants = 256, kQ4KTileBytes = 2304;

template <int kTokens>
SLUICE_AVX512_VNNI void q4k_group(const uint8_t* tiles, int64_t num_tiles,
                                  const QuantizedActivations& act, const Sums& sums, int64_t t0,
                                  float* y, int64_t ldy) {
  using namespace avx512_q4k_lanes;
  alignas(64) float acc[kTokens][kRows] = {};
  alignas(64) float min_acc[kTokens][kRows] = {};
  for (int64_t sb = 0; sb < num_tiles; ++sb) {
    const uint8_t* tile = tiles + static_cast<size_t>(sb) * kQ4KTileBytes;
    prefetch_ahead(tile, kQ4KTileBytes);
    const __m512i words[4] = {load(tile), load(tile + kQ4KScales), load(tile + kQ4KScales + 64),
                              load(tile + kQ4KScales + 128)};
    const Q4KHeader header(words);
    __m512i isum[kTokens];
    SLUICE_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) isum[t] = _mm512_setzero_si512();
    SLUICE_INTERLEAVED_UNROLL for (int c = 0; c < 4; ++c) {
      __m512i q[8];
      SLUICE_INTERLEAVED_UNROLL for (int k = 0; k < 8; ++k) {
        q[k] = load(tile + kQ4KQuants + static_cast<size_t>(64 * (8 * c + k)));
      }
      chunk_products<kTokens>(q, header, c, act, t0, sb, isum);
    }
    finish_super_block<kTokens>(header, isum, act, sums.q4k_pairs, t0, sb, acc, min_acc);
  }
  SLUICE_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
    _mm512_storeu_ps(y + (t0 + t) * ldy,
                     _mm512_sub_ps(_mm512_load_ps(acc[t]), _mm512_load_ps(min_acc[t])));
  }
}

// ---- Q6_K. Tile: ql (32 words), qh (16 words), the 16 int8 scales (4 words), then d (one half
// per row). Half n of the super-block (128 elements) and word k < 8 of it: ql words 16n + k (A)
// and 16n + 8 + k (B) and qh word 8n + k (H) give elements 128n + 4k + 32m for m = 0..3:
// A's low nibbles with H's bits 0-1, B's low with bits 2-3, A's high with 4-5, B's high with
// 6-7; group (of 16) 8n + 2m + k / 4.
constexpr size_t kQ6KHigh = 2048, kQ6KScales = 3072, kQ6KD = 3328, kQ6KTileBytes = 3360;

// Each lane's byte b, sign-extended to 32 bits.
SLUICE_AVX512_VNNI_INLINE __m512i sign_extended_byte(__m512i words, int b) {
  return _mm512_srai_epi32(_mm512_slli_epi32(words, 24 - 8 * b), 24);
}

template <int kTokens>
SLUICE_AVX512_VNNI void q6k_group(const uint8_t* tiles, int64_t num_tiles,
                                  const QuantizedActivations& act, const Sums& sums, int64_t t0,
                                  float* y, int64_t ldy) {
  const __m512i zero = _mm512_setzero_si512();
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  const __m512i bits45 = _mm512_set1_epi8(0x30);
  __m512 acc[kTokens];
  SLUICE_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t sb = 0; sb < num_tiles; ++sb) {
    const uint8_t* tile = tiles + static_cast<size_t>(sb) * kQ6KTileBytes;
    prefetch_ahead(tile, kQ6KTileBytes);
    __m512i scale_words[4];
    SLUICE_INTERLEAVED_UNROLL for (int i = 0; i < 4; ++i) {
      scale_words[i] = load(tile + kQ6KScales + static_cast<size_t>(64 * i));
    }
    __m512i isum[kTokens];
    SLUICE_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) isum[t] = zero;
    SLUICE_INTERLEAVED_UNROLL for (int n = 0; n < 2; ++n) {
      SLUICE_INTERLEAVED_UNROLL for (int kk = 0; kk < 2; ++kk) {
        __m512i q[4][4];  // q[m][j]: word k = 4kk + j of element run m
        SLUICE_INTERLEAVED_UNROLL for (int j = 0; j < 4; ++j) {
          const int k = 4 * kk + j;
          const __m512i a = load(tile + static_cast<size_t>(64 * (16 * n + k)));
          const __m512i b = load(tile + static_cast<size_t>(64 * (16 * n + 8 + k)));
          const __m512i h = load(tile + kQ6KHigh + static_cast<size_t>(64 * (8 * n + k)));
          // (low nibble) | (two bits of h at bits 4-5): 0xf8 is a | (b & c).
          q[0][j] = _mm512_ternarylogic_epi32(_mm512_and_si512(a, low4), _mm512_slli_epi16(h, 4),
                                              bits45, 0xf8);
          q[1][j] = _mm512_ternarylogic_epi32(_mm512_and_si512(b, low4), _mm512_slli_epi16(h, 2),
                                              bits45, 0xf8);
          q[2][j] = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(a, 4), low4), h,
                                              bits45, 0xf8);
          q[3][j] = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(b, 4), low4),
                                              _mm512_srli_epi16(h, 2), bits45, 0xf8);
        }
        __m512i group_scale[4];
        SLUICE_INTERLEAVED_UNROLL for (int m = 0; m < 4; ++m) {
          const int g = 8 * n + 2 * m + kk;
          group_scale[m] = sign_extended_byte(scale_words[g / 4], g % 4);
        }
        SLUICE_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
          const int8_t* x = act.token_qs(t0 + t) + sb * quant::kBlockK + 128 * n + 16 * kk;
          SLUICE_INTERLEAVED_UNROLL for (int m = 0; m < 4; ++m) {
            __m512i sum = zero;
            SLUICE_INTERLEAVED_UNROLL for (int j = 0; j < 4; ++j) {
              sum = _mm512_dpbusd_epi32(sum, q[m][j], broadcast4(x + 32 * m + 4 * j));
            }
            isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(sum, group_scale[m]));
          }
        }
      }
    }
    // The scales as int16 pairs matching the token pairs: (s_4i, s_4i+2) and (s_4i+1, s_4i+3).
    __m512i scale_pairs[8];
    SLUICE_INTERLEAVED_UNROLL for (int i = 0; i < 4; ++i) {
      scale_pairs[2 * i] = _mm512_srai_epi16(_mm512_slli_epi16(scale_words[i], 8), 8);
      scale_pairs[2 * i + 1] = _mm512_srai_epi16(scale_words[i], 8);
    }
    const __m512 d = halves(tile + kQ6KD);
    SLUICE_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
      const int32_t* pair = sums.other.token(t0 + t) + sb * 8;
      __m512i offset = zero;  // sum over the groups of scale * bsum
      SLUICE_INTERLEAVED_UNROLL for (int i = 0; i < 8; ++i) {
        offset = _mm512_dpwssd_epi32(offset, scale_pairs[i], _mm512_set1_epi32(pair[i]));
      }
      const __m512i s = _mm512_sub_epi32(isum[t], _mm512_slli_epi32(offset, 5));
      const __m512 dx = _mm512_set1_ps(act.token_scale(t0 + t)[sb]);
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(d, dx), acc[t]);
    }
  }
  SLUICE_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
    _mm512_storeu_ps(y + (t0 + t) * ldy, acc[t]);
  }
}

// ---- Q8_0. Tile: d (one half per row), then the 32 quants + 128 (8 words).
constexpr size_t kQ80Quants = 32, kQ80TileBytes = 544;

template <int kTokens>
SLUICE_AVX512_VNNI void q8_0_group(const uint8_t* tiles, int64_t num_tiles,
                                   const QuantizedActivations& act, const Sums& sums, int64_t t0,
                                   float* y, int64_t ldy) {
  const __m512i zero = _mm512_setzero_si512();
  __m512 acc[kTokens];
  SLUICE_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < num_tiles; ++b) {
    const uint8_t* tile = tiles + static_cast<size_t>(b) * kQ80TileBytes;
    __m512i w[8];
    SLUICE_INTERLEAVED_UNROLL for (int k = 0; k < 8; ++k) {
      w[k] = load(tile + kQ80Quants + static_cast<size_t>(64 * k));
    }
    const __m512 d = halves(tile);
    SLUICE_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
      const int8_t* x = act.token_qs(t0 + t) + b * quant::kBlock32;
      __m512i sum = zero;
      SLUICE_INTERLEAVED_UNROLL for (int k = 0; k < 8; ++k) {
        sum = _mm512_dpbusd_epi32(sum, w[k], broadcast4(x + 4 * k));
      }
      sum = _mm512_sub_epi32(sum, _mm512_set1_epi32(sums.other.token(t0 + t)[b]));
      const __m512 dx = _mm512_set1_ps(act.token_scale(t0 + t)[b]);
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(d, dx), acc[t]);
    }
  }
  SLUICE_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
    _mm512_storeu_ps(y + (t0 + t) * ldy, acc[t]);
  }
}

using GroupKernel = void (*)(const uint8_t*, int64_t, const QuantizedActivations&, const Sums&,
                             int64_t, float*, int64_t);

#define SLUICE_INTERLEAVED_KERNELS(fn)                                           \
  constexpr GroupKernel fn##_kernels[kTokenGroup] = {fn<1>, fn<2>, fn<3>, fn<4>, \
                                                     fn<5>, fn<6>, fn<7>, fn<8>};
SLUICE_INTERLEAVED_KERNELS(q4k_group)
SLUICE_INTERLEAVED_KERNELS(q6k_group)
SLUICE_INTERLEAVED_KERNELS(q8_0_group)
#undef SLUICE_INTERLEAVED_KERNELS

// ---- Panels straight from a group's tiles (pack_panel_from_tiles): the tiles hold each row's
// words in its lane already, so a panel's steps are the tiles' words with their fields taken
// apart, with no transposes. The values, scales and corrections are those pack_raw makes from the
// same rows' blocks (cpu_quant_panel_avx512.cpp).

SLUICE_AVX512_VNNI_INLINE void store_step(QuantPanel& out, int64_t step, __m512i values) {
  _mm512_store_si512(out.w.data() + step * 64, values);
}

SLUICE_AVX512_VNNI void q4k_panel(const uint8_t* tiles, int64_t num_tiles, QuantPanel& out) {
  using namespace avx512_q4k_lanes;
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  for (int64_t sb = 0; sb < num_tiles; ++sb) {
    const uint8_t* tile = tiles + static_cast<size_t>(sb) * kQ4KTileBytes;
    const __m512i words[4] = {load(tile), load(tile + kQ4KScales), load(tile + kQ4KScales + 64),
                              load(tile + kQ4KScales + 128)};
    const Q4KHeader header(words);
    _mm512_store_ps(out.d.data() + sb * kRows, header.d);
    _mm512_store_ps(out.m.data() + sb * kRows, header.dmin);
    for (int g = 0; g < 8; ++g) {
      _mm512_store_si512(out.scale.data() + (sb * 8 + g) * kRows, header.scale(g));
      // Group g's min, once for each of its two sums of sixteen activations.
      const __m512i min = lane_byte(g < 4 ? header.mins03 : header.mins47, g % 4);
      _mm512_store_si512(out.mins.data() + (sb * 8 + g) * kRows,
                         _mm512_or_si512(min, _mm512_slli_epi32(min, 16)));
    }
    for (int c = 0; c < 4; ++c) {
      for (int k = 0; k < 8; ++k) {
        const __m512i q = load(tile + kQ4KQuants + static_cast<size_t>(64 * (8 * c + k)));
        store_step(out, sb * 64 + 16 * c + k, _mm512_and_si512(q, low4));
        store_step(out, sb * 64 + 16 * c + 8 + k, _mm512_and_si512(_mm512_srli_epi16(q, 4), low4));
      }
    }
  }
}

SLUICE_AVX512_VNNI void q6k_panel(const uint8_t* tiles, int64_t num_tiles, QuantPanel& out) {
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  const __m512i bits45 = _mm512_set1_epi8(0x30);
  const __m512i bias = _mm512_set1_epi8(32);
  for (int64_t sb = 0; sb < num_tiles; ++sb) {
    const uint8_t* tile = tiles + static_cast<size_t>(sb) * kQ6KTileBytes;
    for (int i = 0; i < 4; ++i) {
      const __m512i scale_word = load(tile + kQ6KScales + static_cast<size_t>(64 * i));
      for (int b = 0; b < 4; ++b) {
        _mm512_store_si512(out.scale.data() + (sb * 16 + 4 * i + b) * kRows,
                           sign_extended_byte(scale_word, b));
      }
    }
    _mm512_store_ps(out.d.data() + sb * kRows, halves(tile + kQ6KD));
    // Elements 128n + 4k + 32m are step 32n + k + 8m (see q6k_group), stored as q - 32.
    for (int n = 0; n < 2; ++n) {
      for (int k = 0; k < 8; ++k) {
        const __m512i a = load(tile + static_cast<size_t>(64 * (16 * n + k)));
        const __m512i b = load(tile + static_cast<size_t>(64 * (16 * n + 8 + k)));
        const __m512i h = load(tile + kQ6KHigh + static_cast<size_t>(64 * (8 * n + k)));
        const __m512i q[4] = {
            _mm512_ternarylogic_epi32(_mm512_and_si512(a, low4), _mm512_slli_epi16(h, 4), bits45,
                                      0xf8),
            _mm512_ternarylogic_epi32(_mm512_and_si512(b, low4), _mm512_slli_epi16(h, 2), bits45,
                                      0xf8),
            _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(a, 4), low4), h, bits45,
                                      0xf8),
            _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(b, 4), low4),
                                      _mm512_srli_epi16(h, 2), bits45, 0xf8)};
        for (int m = 0; m < 4; ++m) {
          store_step(out, sb * 64 + 32 * n + k + 8 * m, _mm512_sub_epi8(q[m], bias));
        }
      }
    }
  }
}

SLUICE_AVX512_VNNI void q8_0_panel(const uint8_t* tiles, int64_t num_tiles, QuantPanel& out) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t b = 0; b < num_tiles; ++b) {
    const uint8_t* tile = tiles + static_cast<size_t>(b) * kQ80TileBytes;
    _mm512_store_ps(out.d.data() + b * kRows, halves(tile));
    for (int k = 0; k < 8; ++k) {
      store_step(out, b * 8 + k,
                 _mm512_xor_si512(load(tile + kQ80Quants + static_cast<size_t>(64 * k)), flip));
    }
  }
  // An odd number of blocks ends in half a chunk (as the panel is sized): zero values.
  for (int64_t step = num_tiles * 8; step < static_cast<int64_t>(out.w.size()) / 64; ++step) {
    store_step(out, step, _mm512_setzero_si512());
  }
}

}  // namespace avx512_interleaved_kernels

SLUICE_AVX512_VNNI void pack_panel_from_tiles_avx512_vnni(DType dtype, const uint8_t* group_tiles,
                                                          int64_t cols, QuantPanel& out) {
  using namespace avx512_interleaved_kernels;
  shape_quant_panel(dtype, kRows, cols, out);
  const int64_t num_tiles = cols / interleaved_tile_cols(dtype);
  switch (dtype) {
    case DType::Q4_K:
      q4k_panel(group_tiles, num_tiles, out);
      break;
    case DType::Q6_K:
      q6k_panel(group_tiles, num_tiles, out);
      break;
    default:
      q8_0_panel(group_tiles, num_tiles, out);
      break;
  }
  finish_quant_panel(out);
}

void quant_interleaved_rows_avx512_vnni(DType dtype, const uint8_t* tiles, int64_t group_begin,
                                        int64_t group_end, int64_t cols,
                                        const QuantizedActivations& act, float* y, int64_t ldy) {
  using namespace avx512_interleaved_kernels;
  thread_local Sums sums;
  const GroupKernel* kernels = nullptr;
  switch (dtype) {
    case DType::Q4_K:
      sums.q4k_pairs.fill(act);
      kernels = q4k_group_kernels;
      break;
    case DType::Q6_K:
      fill_q6k_pairs(act, sums.other);
      kernels = q6k_group_kernels;
      break;
    default:
      fill_q8_0_sums(act, sums.other);
      kernels = q8_0_group_kernels;
      break;
  }
  run_interleaved_groups<kTokenGroup>(kernels, sums, dtype, tiles, group_begin, group_end, cols,
                                      act, y, ldy);
}

}  // namespace sluice

#endif  // SLUICE_QUANT_X86
