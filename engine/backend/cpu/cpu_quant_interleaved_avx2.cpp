// The AVX2 kernels for interleaved rows (cpu_quant_interleave.h): the same sixteen-row tiles as
// the AVX-512 VNNI kernels read (cpu_quant_interleaved_avx512.cpp), taken as two halves of eight
// rows, one row per 32-bit lane of a ymm: half h of a tile's word j is the 32 bytes at
// at + 64 j + 32 h. Each tile's two halves are multiplied one after the other, so the second
// reads the tile's cache lines from L1.
//
// Without VNNI, four bytes of a row times four activations of a token (broadcast) are
// vpmaddubsw's two int16 pair sums per lane, with the weights as its unsigned operand (Q4_K's and
// Q6_K's q are never negative) and the activations signed, then added in 16 bits as far as they
// cannot overflow and multiplied by each group's scale (int16 in both halves of a lane) with
// vpmaddwd. Q6_K's q - 32 is taken off once per super-block through the activations' sums, as
// the AVX-512 kernel does; Q8_0, whose tiles hold q + 128, flips them back and uses the sign
// trick (below). Per output the scalar definition's operations (cpu_quant_dot.h): exact
// integer sums, then acc = fma(float(S), d_w * d_x, acc) (and Q4_K's min_acc) per super-block in
// order, so the bits of every other version. Built with -ffp-contract=off like the other kernel
// files.
#include <algorithm>
#include <cstring>

#include "engine/backend/cpu/cpu_quant_dot_simd.h"
#include "engine/backend/cpu/cpu_quant_interleave.h"
#include "engine/backend/cpu/cpu_quant_interleaved_sums.h"
#include "engine/core/quant_blocks.h"

#if SLUICE_QUANT_X86

namespace sluice {

// A named namespace, not an anonymous one: see cpu_quant_dot_avx2.cpp.
namespace avx2_interleaved_kernels {

constexpr int kHalfRows = kInterleaveRows / 2;  // one ymm of int32 or float lanes
constexpr int kHalfBytes = 32;                  // a half's share of a tile's 64-byte word
constexpr int kTokenGroup = 4;  // tokens a group's tiles are multiplied by at a time
// How far ahead of the tile being multiplied its cache lines are asked for.
constexpr size_t kPrefetchBytes = 8192;
constexpr char kZero = static_cast<char>(0x80);  // a vpshufb index that writes 0

// Unrolls the loops over a tile's words and tokens completely, so that the decoded words and
// accumulators stay in registers.
#define SLUICE_AVX2_INTERLEAVED_UNROLL _Pragma("GCC unroll 16")

SLUICE_AVX2_INLINE __m256i load_half(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// Four activations of a token in every lane.
SLUICE_AVX2_INLINE __m256i broadcast4(const int8_t* x) {
  int32_t four;
  std::memcpy(&four, x, sizeof four);
  return _mm256_set1_epi32(four);
}

// The same 16-byte vpshufb pattern in both 128-bit lanes.
SLUICE_AVX2_INLINE __m256i pattern(char b0, char b1, char b2, char b3) {
  const auto at = [](char b, int k) { return b == kZero ? kZero : static_cast<char>(4 * k + b); };
  const __m128i p = _mm_setr_epi8(at(b0, 0), at(b1, 0), at(b2, 0), at(b3, 0), at(b0, 1), at(b1, 1),
                                  at(b2, 1), at(b3, 1), at(b0, 2), at(b1, 2), at(b2, 2), at(b3, 2),
                                  at(b0, 3), at(b1, 3), at(b2, 3), at(b3, 3));
  return _mm256_broadcastsi128_si256(p);
}

// Each lane's byte b (of its own 32-bit word), zero-extended into both int16 halves of the lane:
// vpmaddwd's scale operand for a lane's two pair sums.
SLUICE_AVX2_INLINE __m256i byte_in_halves(__m256i v, int b) {
  const auto c = static_cast<char>(b);
  return _mm256_shuffle_epi8(v, pattern(c, kZero, c, kZero));
}

// The same, sign-extended (Q6_K's int8 scales).
SLUICE_AVX2_INLINE __m256i signed_byte_in_halves(__m256i v, int b) {
  const auto c = static_cast<char>(b);
  return _mm256_srai_epi16(_mm256_shuffle_epi8(v, pattern(kZero, c, kZero, c)), 8);
}

// Eight halves at p, one per row, as floats.
SLUICE_AVX2_INLINE __m256 halves(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Asks for the cache lines of a tile's bytes kPrefetchBytes ahead.
SLUICE_AVX2_INLINE void prefetch_ahead(const uint8_t* tile, size_t tile_bytes) {
  const uint8_t* ahead = tile + kPrefetchBytes;
  for (size_t at = 0; at < tile_bytes; at += 64)
    _mm_prefetch(reinterpret_cast<const char*>(ahead + at), _MM_HINT_T0);
}

// acc[t][row] for the sixteen rows of a group and up to kTokenGroup tokens.
using GroupAcc = float[kTokenGroup][kInterleaveRows];

// ---- Q4_K (the tile of cpu_quant_interleaved_avx512.cpp): d | dmin << 16, three words of scale
// bytes at 64, the 32 quant words at 256 (chunk c of 64 elements is words 8c..8c+7, low nibbles
// elements 0-31 of the chunk, high nibbles 32-63).
constexpr size_t kQ4KScales = 64, kQ4KQuants = 256, kQ4KTileBytes = 2304;

// A super-block's d, dmin and the scales and mins of groups 0-3 / 4-7 one byte each (ggml's
// get_scale_min_k4, as scales_mins_k4_bytes decodes it), for the eight rows of one half.
struct Q4KHalfHeader {
  __m256 d, dmin;
  __m256i scales03, scales47, mins03, mins47;

  SLUICE_AVX2_INLINE explicit Q4KHalfHeader(const uint8_t* half_tile) {
    const __m256i w0 = load_half(half_tile);
    // Each 128-bit lane's four d halves, then its four dmin halves; then the d halves of all
    // eight rows to the low 128 bits, the dmin halves to the high.
    const __m256i by_field =
        _mm256_shuffle_epi8(w0, _mm256_broadcastsi128_si256(_mm_setr_epi8(
                                    0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15)));
    const __m256i ordered = _mm256_permute4x64_epi64(by_field, 0xd8);  // qwords 0, 2, 1, 3
    d = _mm256_cvtph_ps(_mm256_castsi256_si128(ordered));
    dmin = _mm256_cvtph_ps(_mm256_extracti128_si256(ordered, 1));
    const __m256i w1 = load_half(half_tile + kQ4KScales);
    const __m256i w2 = load_half(half_tile + kQ4KScales + 64);
    const __m256i w3 = load_half(half_tile + kQ4KScales + 128);
    const __m256i low6 = _mm256_set1_epi8(0x3f);
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    scales03 = _mm256_and_si256(w1, low6);
    mins03 = _mm256_and_si256(w2, low6);
    // Groups 4-7: a nibble of bytes 8-11 with the top two bits of bytes 0-3 (scales) or 4-7
    // (mins) above it.
    scales47 =
        _mm256_and_si256(_mm256_or_si256(_mm256_and_si256(w3, low4),
                                         _mm256_andnot_si256(low4, _mm256_srli_epi32(w1, 2))),
                         low6);
    mins47 = _mm256_and_si256(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(w3, 4), low4),
                                              _mm256_andnot_si256(low4, _mm256_srli_epi32(w2, 2))),
                              low6);
  }

  SLUICE_AVX2_INLINE __m256i scale(int g) const {
    return byte_in_halves(g < 4 ? scales03 : scales47, g % 4);
  }

  // Each lane's mins of groups 2i and 2i + 1, zero-extended to 16 bits each.
  SLUICE_AVX2_INLINE __m256i min_pair(int i) const {
    const auto b = static_cast<char>(2 * (i % 2));
    return _mm256_shuffle_epi8(i < 2 ? mins03 : mins47,
                               pattern(b, kZero, static_cast<char>(b + 1), kZero));
  }
};

template <int kTokens>
SLUICE_AVX2 void q4k_group(const uint8_t* tiles, int64_t num_tiles, const QuantizedActivations& act,
                           const TokenSums& pairs, int64_t t0, float* y, int64_t ldy) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  alignas(32) GroupAcc acc = {}, min_acc = {};
  for (int64_t sb = 0; sb < num_tiles; ++sb) {
    const uint8_t* tile = tiles + static_cast<size_t>(sb) * kQ4KTileBytes;
    prefetch_ahead(tile, kQ4KTileBytes);
    for (int h = 0; h < 2; ++h) {
      const uint8_t* half = tile + kHalfBytes * h;
      const Q4KHalfHeader header(half);
      __m256i isum[kTokens];
      SLUICE_AVX2_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
        isum[t] = _mm256_setzero_si256();
      }
      SLUICE_AVX2_INTERLEAVED_UNROLL for (int c = 0; c < 4; ++c) {
        // Part s of the chunk: 16 elements, words 4 (s % 2) .. 4 (s % 2) + 3, their low (s < 2)
        // or high nibbles: group 2c + s / 2. A pair sum is at most 2 * 15 * 127, four of them
        // 15240: the part's sums fit in 16 bits.
        SLUICE_AVX2_INTERLEAVED_UNROLL for (int s = 0; s < 4; ++s) {
          __m256i w[4];
          SLUICE_AVX2_INTERLEAVED_UNROLL for (int j = 0; j < 4; ++j) {
            const __m256i q = load_half(half + kQ4KQuants + 64 * (8 * c + 4 * (s % 2) + j));
            w[j] = _mm256_and_si256(s < 2 ? q : _mm256_srli_epi16(q, 4), low4);
          }
          const __m256i scale = header.scale(2 * c + s / 2);
          SLUICE_AVX2_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
            const int8_t* x = act.token_qs(t0 + t) + sb * quant::kBlockK + 64 * c + 16 * s;
            __m256i sum = _mm256_maddubs_epi16(w[0], broadcast4(x));
            SLUICE_AVX2_INTERLEAVED_UNROLL for (int j = 1; j < 4; ++j) {
              sum = _mm256_add_epi16(sum, _mm256_maddubs_epi16(w[j], broadcast4(x + 4 * j)));
            }
            isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(sum, scale));
          }
        }
      }
      SLUICE_AVX2_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
        const __m256 dx = _mm256_set1_ps(act.token_scale(t0 + t)[sb]);
        float* a = acc[t] + kHalfRows * h;
        _mm256_store_ps(a, _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), _mm256_mul_ps(header.d, dx),
                                           _mm256_load_ps(a)));
        const int32_t* pair = pairs.token(t0 + t) + sb * 4;
        __m256i m = _mm256_madd_epi16(header.min_pair(0), _mm256_set1_epi32(pair[0]));
        SLUICE_AVX2_INTERLEAVED_UNROLL for (int i = 1; i < 4; ++i) {
          m = _mm256_add_epi32(m,
                               _mm256_madd_epi16(header.min_pair(i), _mm256_set1_epi32(pair[i])));
        }
        float* ma = min_acc[t] + kHalfRows * h;
        _mm256_store_ps(ma, _mm256_fmadd_ps(_mm256_cvtepi32_ps(m), _mm256_mul_ps(header.dmin, dx),
                                            _mm256_load_ps(ma)));
      }
    }
  }
  SLUICE_AVX2_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
    SLUICE_AVX2_INTERLEAVED_UNROLL for (int h = 0; h < 2; ++h) {
      _mm256_storeu_ps(y + (t0 + t) * ldy + kHalfRows * h,
                       _mm256_sub_ps(_mm256_load_ps(acc[t] + kHalfRows * h),
                                     _mm256_load_ps(min_acc[t] + kHalfRows * h)));
    }
  }
}

// ---- Q6_K: ql (32 words), qh (16 words) at 2048, the 16 int8 scales (4 words) at 3072, then d
// (one half per row) at 3328. Half n of the super-block (128 elements) and word k < 8 of it: ql
// words 16n + k (A) and 16n + 8 + k (B) and qh word 8n + k (H) give elements 128n + 4k + 32m for
// m = 0..3: A's low nibbles with H's bits 0-1, B's low with bits 2-3, A's high with 4-5, B's high
// with 6-7; group (of 16) 8n + 2m + k / 4.
constexpr size_t kQ6KHigh = 2048, kQ6KScales = 3072, kQ6KD = 3328, kQ6KTileBytes = 3360;

// Element run m of word k's four values per row, in 0..63.
SLUICE_AVX2_INLINE __m256i q6k_values(const uint8_t* half, int n, int k, int m) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256i bits45 = _mm256_set1_epi8(0x30);
  const __m256i ql = load_half(half + 64 * (16 * n + 8 * (m % 2) + k));
  const __m256i qh = load_half(half + kQ6KHigh + 64 * (8 * n + k));
  const __m256i low = _mm256_and_si256(m < 2 ? ql : _mm256_srli_epi16(ql, 4), low4);
  // H's bits 2m and 2m + 1 moved to bits 4-5.
  __m256i high = qh;
  if (m == 0) high = _mm256_slli_epi16(qh, 4);
  if (m == 1) high = _mm256_slli_epi16(qh, 2);
  if (m == 3) high = _mm256_srli_epi16(qh, 2);
  return _mm256_or_si256(low, _mm256_and_si256(high, bits45));
}

template <int kTokens>
SLUICE_AVX2 void q6k_group(const uint8_t* tiles, int64_t num_tiles, const QuantizedActivations& act,
                           const TokenSums& pairs, int64_t t0, float* y, int64_t ldy) {
  alignas(32) GroupAcc acc = {};
  for (int64_t sb = 0; sb < num_tiles; ++sb) {
    const uint8_t* tile = tiles + static_cast<size_t>(sb) * kQ6KTileBytes;
    prefetch_ahead(tile, kQ6KTileBytes);
    for (int h = 0; h < 2; ++h) {
      const uint8_t* half = tile + kHalfBytes * h;
      __m256i isum[kTokens];
      SLUICE_AVX2_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
        isum[t] = _mm256_setzero_si256();
      }
      SLUICE_AVX2_INTERLEAVED_UNROLL for (int n = 0; n < 2; ++n) {
        SLUICE_AVX2_INTERLEAVED_UNROLL for (int kk = 0; kk < 2; ++kk) {
          SLUICE_AVX2_INTERLEAVED_UNROLL for (int m = 0; m < 4; ++m) {
            __m256i q[4];  // words k = 4kk + j of run m: group 8n + 2m + kk
            SLUICE_AVX2_INTERLEAVED_UNROLL for (int j = 0; j < 4; ++j) {
              q[j] = q6k_values(half, n, 4 * kk + j, m);
            }
            const int g = 8 * n + 2 * m + kk;
            const __m256i scale =
                signed_byte_in_halves(load_half(half + kQ6KScales + 64 * (g / 4)), g % 4);
            SLUICE_AVX2_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
              const int8_t* x =
                  act.token_qs(t0 + t) + sb * quant::kBlockK + 128 * n + 32 * m + 16 * kk;
              // A pair sum is at most 2 * 63 * 127: two of them fit in 16 bits, four do not.
              const __m256i s01 = _mm256_add_epi16(_mm256_maddubs_epi16(q[0], broadcast4(x)),
                                                   _mm256_maddubs_epi16(q[1], broadcast4(x + 4)));
              const __m256i s23 = _mm256_add_epi16(_mm256_maddubs_epi16(q[2], broadcast4(x + 8)),
                                                   _mm256_maddubs_epi16(q[3], broadcast4(x + 12)));
              isum[t] = _mm256_add_epi32(isum[t], _mm256_add_epi32(_mm256_madd_epi16(s01, scale),
                                                                   _mm256_madd_epi16(s23, scale)));
            }
          }
        }
      }
      // The scales as int16 pairs matching the token pairs: (s_4i, s_4i+2) and (s_4i+1, s_4i+3).
      __m256i scale_pairs[8];
      SLUICE_AVX2_INTERLEAVED_UNROLL for (int i = 0; i < 4; ++i) {
        const __m256i words = load_half(half + kQ6KScales + 64 * i);
        scale_pairs[2 * i] = _mm256_srai_epi16(_mm256_slli_epi16(words, 8), 8);
        scale_pairs[2 * i + 1] = _mm256_srai_epi16(words, 8);
      }
      const __m256 d = halves(tile + kQ6KD + 2 * kHalfRows * h);
      SLUICE_AVX2_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
        const int32_t* pair = pairs.token(t0 + t) + sb * 8;
        __m256i offset = _mm256_madd_epi16(scale_pairs[0], _mm256_set1_epi32(pair[0]));
        SLUICE_AVX2_INTERLEAVED_UNROLL for (int i = 1; i < 8; ++i) {
          offset = _mm256_add_epi32(offset,
                                    _mm256_madd_epi16(scale_pairs[i], _mm256_set1_epi32(pair[i])));
        }
        const __m256i s = _mm256_sub_epi32(isum[t], _mm256_slli_epi32(offset, 5));
        const __m256 dx = _mm256_set1_ps(act.token_scale(t0 + t)[sb]);
        float* a = acc[t] + kHalfRows * h;
        _mm256_store_ps(
            a, _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(d, dx), _mm256_load_ps(a)));
      }
    }
  }
  SLUICE_AVX2_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
    SLUICE_AVX2_INTERLEAVED_UNROLL for (int h = 0; h < 2; ++h) {
      _mm256_storeu_ps(y + (t0 + t) * ldy + kHalfRows * h, _mm256_load_ps(acc[t] + kHalfRows * h));
    }
  }
}

// ---- Q8_0: d (one half per row), then the 32 quants + 128 (8 words) at 32. The stored bytes
// flipped back to q, then vpmaddubsw takes |q| and the activation with q's sign (|q| <= 128,
// |x| <= 127: no saturation). Both halves' float accumulators stay in registers (a block's float
// step in memory, as the K-quants keep it, cost 1 token 17%: 36 against 43 GB/s).
constexpr size_t kQ80Quants = 32, kQ80TileBytes = 544;

template <int kTokens>
SLUICE_AVX2 void q8_0_group(const uint8_t* tiles, int64_t num_tiles,
                            const QuantizedActivations& act, const TokenSums&, int64_t t0, float* y,
                            int64_t ldy) {
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[2][kTokens];
  SLUICE_AVX2_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
    acc[0][t] = acc[1][t] = _mm256_setzero_ps();
  }
  for (int64_t b = 0; b < num_tiles; ++b) {
    const uint8_t* tile = tiles + static_cast<size_t>(b) * kQ80TileBytes;
    prefetch_ahead(tile, kQ80TileBytes);
    SLUICE_AVX2_INTERLEAVED_UNROLL for (int h = 0; h < 2; ++h) {
      const uint8_t* half = tile + kHalfBytes * h;
      __m256i isum[kTokens];
      SLUICE_AVX2_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
        isum[t] = _mm256_setzero_si256();
      }
      SLUICE_AVX2_INTERLEAVED_UNROLL for (int k = 0; k < 8; ++k) {
        const __m256i q = _mm256_xor_si256(load_half(half + kQ80Quants + 64 * k), flip);
        const __m256i magnitude = _mm256_sign_epi8(q, q);
        SLUICE_AVX2_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
          const int8_t* x = act.token_qs(t0 + t) + b * quant::kBlock32 + 4 * k;
          const __m256i pairs = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(broadcast4(x), q));
          isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(pairs, ones));
        }
      }
      const __m256 d = halves(tile + 2 * kHalfRows * h);
      SLUICE_AVX2_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
        const __m256 dx = _mm256_set1_ps(act.token_scale(t0 + t)[b]);
        acc[h][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), _mm256_mul_ps(d, dx), acc[h][t]);
      }
    }
  }
  SLUICE_AVX2_INTERLEAVED_UNROLL for (int t = 0; t < kTokens; ++t) {
    SLUICE_AVX2_INTERLEAVED_UNROLL for (int h = 0; h < 2; ++h) {
      _mm256_storeu_ps(y + (t0 + t) * ldy + kHalfRows * h, acc[h][t]);
    }
  }
}

using GroupKernel = void (*)(const uint8_t*, int64_t, const QuantizedActivations&, const TokenSums&,
                             int64_t, float*, int64_t);

constexpr GroupKernel kQ4KKernels[kTokenGroup] = {q4k_group<1>, q4k_group<2>, q4k_group<3>,
                                                  q4k_group<4>};
constexpr GroupKernel kQ6KKernels[kTokenGroup] = {q6k_group<1>, q6k_group<2>, q6k_group<3>,
                                                  q6k_group<4>};
constexpr GroupKernel kQ8_0Kernels[kTokenGroup] = {q8_0_group<1>, q8_0_group<2>, q8_0_group<3>,
                                                   q8_0_group<4>};

}  // namespace avx2_interleaved_kernels

void quant_interleaved_rows_avx2(DType dtype, const uint8_t* tiles, int64_t group_begin,
                                 int64_t group_end, int64_t cols, const QuantizedActivations& act,
                                 float* y, int64_t ldy) {
  using namespace avx2_interleaved_kernels;
  thread_local TokenSums sums;
  const GroupKernel* kernels = nullptr;
  if (dtype == DType::Q4_K) {
    fill_q4k_pairs(act, sums);
    kernels = kQ4KKernels;
  } else if (dtype == DType::Q6_K) {
    fill_q6k_pairs(act, sums);
    kernels = kQ6KKernels;
  } else {
    kernels = kQ8_0Kernels;
  }
  run_interleaved_groups<kTokenGroup>(kernels, sums, dtype, tiles, group_begin, group_end, cols,
                                      act, y, ldy);
}

}  // namespace sluice

#endif  // SLUICE_QUANT_X86
