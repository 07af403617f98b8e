// Shared by the quantized dot-product kernels (cpu_quant_dot*.cpp): the fixed lane trees, the
// tile dispatch (a tile's row and token counts become template constants in one place) and the
// SIMD versions' entry points. The SIMD files compile their functions with target attributes
// (not target_clones), so they also build and run under the sanitizers and with clang; the
// scalar version in cpu_quant_dot.cpp is the definition they reproduce.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "engine/backend/cpu/cpu_quant_dot.h"
#include "engine/backend/cpu/cpu_quant_operands.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SLUICE_QUANT_X86 1
#else
#define SLUICE_QUANT_X86 0
#endif

#define SLUICE_QUANT_INLINE inline __attribute__((always_inline))
// Unrolls a loop over a tile's rows or tokens before GCC decides where the accumulators live:
// unrolled late, arrays of accumulators stay in memory (a store and reload per chunk).
#define SLUICE_QUANT_UNROLL _Pragma("GCC unroll 8")

namespace sluice {

struct QuantTileArgs {
  const UnpackedWeights& weights;
  int row0;
  const QuantizedActivations& act;
  int64_t t0;
  float* y;  // y[t * ldy + r]
  int64_t ldy;
};

// The rows' and tokens' arrays of a tile as plain pointers, taken once: the kernels then walk
// them with constant offsets instead of re-reading strides from the operand structs.
template <int kRows>
struct QuantRowPointers {
  const int8_t* w[kRows];
  const float* d[kRows];
  const float* m[kRows];             // min types only
  const int8_t* group_scale[kRows];  // super-block types only
  const int8_t* mins[kRows];         // Super256Min only

  QuantRowPointers(const UnpackedWeights& weights, int row0) {
    const bool super256 =
        weights.family == QuantFamily::Super256 || weights.family == QuantFamily::Super256Min;
    for (int r = 0; r < kRows; ++r) {
      const int row = row0 + r;
      w[r] = weights.row_w(row);
      d[r] = weights.row_d(row);
      m[r] = weights.m.size() ? weights.row_m(row) : nullptr;
      group_scale[r] = super256 ? weights.row_group_scale(row) : nullptr;
      mins[r] = weights.mins.size() ? weights.row_mins(row) : nullptr;
    }
  }
};

template <int kTokens>
struct QuantTokenPointers {
  const int8_t* a[kTokens];
  const float* dx[kTokens];
  const float* sx[kTokens];      // Q8_1 only
  const int16_t* bsum[kTokens];  // Q8_K only

  QuantTokenPointers(const QuantizedActivations& act, int64_t t0) {
    for (int t = 0; t < kTokens; ++t) {
      const int64_t token = t0 + t;
      a[t] = act.token_qs(token);
      dx[t] = act.token_scale(token);
      sx[t] = act.sum.size() ? act.token_sum(token) : nullptr;
      bsum[t] = act.bsum.size() ? act.token_bsum(token) : nullptr;
    }
  }
};

template <int kRows, int kTokens>
struct QuantTilePointers : QuantRowPointers<kRows>, QuantTokenPointers<kTokens> {
  explicit QuantTilePointers(const QuantTileArgs& args)
      : QuantRowPointers<kRows>(args.weights, args.row0),
        QuantTokenPointers<kTokens>(args.act, args.t0) {}
};

// Points a raw-row source (the direct path's: blocks[kRows], next, tile_bytes) at a tile's rows,
// row r at rows + r * row_bytes, and its prefetch at the rows after them.
template <typename Source>
SLUICE_QUANT_INLINE void point_at_rows(Source& src, const uint8_t* rows, size_t row_bytes) {
  using Block = std::remove_cv_t<std::remove_pointer_t<std::remove_extent_t<decltype(src.blocks)>>>;
  constexpr int kRows = static_cast<int>(std::extent_v<decltype(src.blocks)>);
  for (int r = 0; r < kRows; ++r)
    src.blocks[r] = reinterpret_cast<const Block*>(rows + static_cast<size_t>(r) * row_bytes);
  src.next = rows + static_cast<size_t>(kRows) * row_bytes;
  src.tile_bytes = static_cast<int64_t>(kRows * row_bytes);
}

// Calls tile.template run<kRows, kTokens>() for the tile's shape.
template <typename Tile>
inline void dispatch_tile_shape(int num_rows, int num_tokens, const Tile& tile) {
  static_assert(kQuantTileRows == 2 && kQuantTileTokens == 4, "update the cases below");
  switch (num_rows * 8 + num_tokens) {
    case 9:
      return tile.template run<1, 1>();
    case 10:
      return tile.template run<1, 2>();
    case 11:
      return tile.template run<1, 3>();
    case 12:
      return tile.template run<1, 4>();
    case 17:
      return tile.template run<2, 1>();
    case 18:
      return tile.template run<2, 2>();
    case 19:
      return tile.template run<2, 3>();
    default:
      return tile.template run<2, 4>();
  }
}

// A tile shape's call of Kernel::template run<kRows, kTokens>(args).
template <typename Kernel>
struct KernelTile {
  const QuantTileArgs& args;
  template <int kRows, int kTokens>
  void run() const {
    Kernel::template run<kRows, kTokens>(args);
  }
};

// Calls Kernel::template run<kRows, kTokens>(args) for the tile's shape.
template <typename Kernel>
inline void dispatch_quant_tile(int num_rows, int num_tokens, const QuantTileArgs& args) {
  dispatch_tile_shape(num_rows, num_tokens, KernelTile<Kernel>{args});
}

// Calls the family's kernel (Block32Kernel<has_min> or Super256Kernel<has_min>) for the tile.
template <template <bool> class Block32Kernel, template <bool> class Super256Kernel>
inline void dispatch_quant_family_tile(int num_rows, int num_tokens, const QuantTileArgs& args) {
  switch (args.weights.family) {
    case QuantFamily::Block32:
      return dispatch_quant_tile<Block32Kernel<false>>(num_rows, num_tokens, args);
    case QuantFamily::Block32Min:
      return dispatch_quant_tile<Block32Kernel<true>>(num_rows, num_tokens, args);
    case QuantFamily::Super256:
      return dispatch_quant_tile<Super256Kernel<false>>(num_rows, num_tokens, args);
    case QuantFamily::Super256Min:
      return dispatch_quant_tile<Super256Kernel<true>>(num_rows, num_tokens, args);
  }
}

#if SLUICE_QUANT_X86
// GCC 12 warns that _mm512_undefined_ps() "may be used uninitialized" inside the AVX-512
// intrinsics once they are inlined (GCC bug 105593); the warning sits in the header's lines.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#define SLUICE_AVX2 __attribute__((target("avx2,fma,f16c")))
#define SLUICE_AVX2_INLINE SLUICE_AVX2 SLUICE_QUANT_INLINE
#define SLUICE_AVX512_VNNI \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,fma,f16c")))
#define SLUICE_AVX512_VNNI_INLINE SLUICE_AVX512_VNNI SLUICE_QUANT_INLINE

// A tile's (row, token) pairs in the lanes of one register: lane p = t * kRows + r; the lanes
// past kRows * kTokens are 0.
inline constexpr int kQuantTilePairs = kQuantTileRows * kQuantTileTokens;
static_assert(kQuantTilePairs == 8, "one ymm of pairs");

// Lane t * kRows + r = row_values[r] (row_lanes) or token_values[t] (token_lanes).
template <int kRows, int kTokens>
SLUICE_AVX2_INLINE __m256 row_lanes(const float* row_values) {
  float v[8] = {};
  SLUICE_QUANT_UNROLL for (int p = 0; p < kRows * kTokens; ++p) v[p] = row_values[p % kRows];
  return _mm256_setr_ps(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
}
template <int kRows, int kTokens>
SLUICE_AVX2_INLINE __m256 token_lanes(const float* token_values) {
  float v[8] = {};
  SLUICE_QUANT_UNROLL for (int p = 0; p < kRows * kTokens; ++p) v[p] = token_values[p / kRows];
  return _mm256_setr_ps(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
}

// y[t * ldy + r] = lane t * kRows + r of acc.
template <int kRows, int kTokens>
SLUICE_AVX2_INLINE void store_pairs(__m256 acc, float* y, int64_t ldy) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
    SLUICE_QUANT_UNROLL for (int r = 0; r < kRows; ++r) y[t * ldy + r] = lanes[t * kRows + r];
  }
}

// Lane p = the sum of the eight lanes of v[p] for p < kPairs (exact integer sums, so any
// order); the other lanes are 0.
template <int kPairs>
SLUICE_AVX2_INLINE __m256i sum_lanes8(const __m256i* v) {
  if constexpr (kPairs <= 2) {  // (decoding one token: two rows)
    const __m256i t =
        _mm256_add_epi32(_mm256_unpacklo_epi32(v[0], v[1]), _mm256_unpackhi_epi32(v[0], v[1]));
    const __m256i x = _mm256_add_epi32(t, _mm256_unpackhi_epi64(t, t));
    const __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    return _mm256_inserti128_si256(_mm256_setzero_si256(),
                                   _mm_unpacklo_epi64(sum, _mm_setzero_si128()), 0);
  } else {
    const __m256i a =
        _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
    const __m256i b =
        _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
    // a: [v0..v3 of the low 128 bits, v0..v3 of the high 128 bits], b the same for v4..v7.
    return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20),
                            _mm256_permute2x128_si256(a, b, 0x31));
  }
}

SLUICE_AVX2_INLINE __m256i loadu32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// (x >> shift) & mask in every byte (the 16-bit shift's spill from the next byte is masked off).
SLUICE_AVX2_INLINE __m256i byte_bits(__m256i x, int shift, int mask) {
  return _mm256_and_si256(_mm256_srl_epi16(x, _mm_cvtsi32_si128(shift)),
                          _mm256_set1_epi8(static_cast<char>(mask)));
}

// For the direct path's raw-row sources: reading blocks straight from memory, the kernel's
// loads wait on each new block unless it is fetched ahead, so step i of n of the current tile
// prefetches the same share of the next tile (the rows after the tile's, contiguous with them)
// while this one is multiplied.
struct NextTilePrefetch {
  const uint8_t* next = nullptr;  // the first byte after the tile's rows
  int64_t tile_bytes = 0;
  mutable int64_t step_bytes = 0;  // whole cache lines per step, set by step 0

  SLUICE_QUANT_INLINE void prefetch(int64_t i, int64_t n) const {
    if (i == 0) step_bytes = (tile_bytes + 64 * n - 1) / (64 * n) * 64;
    const int64_t begin = i * step_bytes;
    const int64_t end = begin + step_bytes < tile_bytes ? begin + step_bytes : tile_bytes;
    for (int64_t at = begin; at < end; at += 64)
      _mm_prefetch(reinterpret_cast<const char*>(next + at), _MM_HINT_T0);
  }
};

// One super-block's min products for one (row, token), exact: the eight int32 lanes sum to
// M = sum of mins[g] * bsum[g] over the 16 groups (the mins (int8) in a register).
SLUICE_AVX2_INLINE __m256i super256_min_products(__m128i mins, const int16_t* bsum) {
  return _mm256_madd_epi16(_mm256_cvtepi8_epi16(mins),
                           _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsum)));
}

// The arguments and preconditions of quant_dot_tile (cpu_quant_dot.h).
void quant_dot_tile_avx2(const UnpackedWeights& weights, int row0, int num_rows,
                         const QuantizedActivations& act, int64_t t0, int num_tokens, float* y,
                         int64_t ldy);
void quant_dot_tile_avx512_vnni(const UnpackedWeights& weights, int row0, int num_rows,
                                const QuantizedActivations& act, int64_t t0, int num_tokens,
                                float* y, int64_t ldy);
// The arguments and preconditions of quant_direct_tile (cpu_quant_dot.h), for the types
// has_direct_quant_kernel_avx2 / _avx512_vnni accept.
bool has_direct_quant_kernel_avx2(DType dtype);
void quant_direct_tile_avx2(DType dtype, const uint8_t* rows, size_t row_bytes, int num_rows,
                            int64_t cols, const QuantizedActivations& act, int64_t t0,
                            int num_tokens, float* y, int64_t ldy);
void quant_direct_wide_avx2(DType dtype, const uint8_t* rows, size_t row_bytes, int64_t cols,
                            const QuantizedActivations& act, int64_t t, float* y);
bool has_direct_quant_kernel_avx512_vnni(DType dtype);
void quant_direct_tile_avx512_vnni(DType dtype, const uint8_t* rows, size_t row_bytes, int num_rows,
                                   int64_t cols, const QuantizedActivations& act, int64_t t0,
                                   int num_tokens, float* y, int64_t ldy);
void quant_direct_wide_avx512_vnni(DType dtype, const uint8_t* rows, size_t row_bytes, int64_t cols,
                                   const QuantizedActivations& act, int64_t t, float* y);
// The arguments and preconditions of quant_direct_rows (cpu_quant_dot.h), for the types
// has_direct_rows_kernel_avx512_vnni accepts.
bool has_direct_rows_kernel_avx512_vnni(DType dtype);
int direct_rows_max_tokens_avx512_vnni(DType dtype);
void quant_direct_rows_avx512_vnni(DType dtype, const uint8_t* data, size_t row_bytes,
                                   int64_t row_begin, int64_t row_end, int64_t cols,
                                   const QuantizedActivations& act, float* y, int64_t ldy);
// Its Q6_K kernel (cpu_quant_q6k_rows_avx512.cpp).
void quant_direct_rows_q6k_avx512_vnni(const uint8_t* data, size_t row_bytes, int64_t row_begin,
                                       int64_t row_end, int64_t cols,
                                       const QuantizedActivations& act, float* y, int64_t ldy);
// Its Q8_0 kernel (cpu_quant_q8_0_rows_avx512.cpp).
void quant_direct_rows_q8_0_avx512_vnni(const uint8_t* data, size_t row_bytes, int64_t row_begin,
                                        int64_t row_end, int64_t cols,
                                        const QuantizedActivations& act, float* y, int64_t ldy);
#endif

}  // namespace sluice
