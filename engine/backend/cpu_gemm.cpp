#include "engine/backend/cpu_gemm.h"

#include <algorithm>
#include <cstring>

#include "engine/backend/cpu_math.h"

namespace sluice {

namespace {

constexpr int kLanes = 16;
// Sixteen floats as one vector (GCC/Clang vector extension): one AVX-512 register, two AVX2
// registers; the arithmetic is lane by lane either way, so the lowering never changes a sum.
using Float16 = float __attribute__((vector_size(kLanes * sizeof(float))));

constexpr int kTileTokens = 4;
constexpr int kTileRows = 4;
// Rows per cache block: the block's weights (about 512 KiB) stay in L2 while every token tile
// passes over them.
constexpr int64_t kBlockBytes = int64_t{512} << 10;

SLUICE_ALWAYS_INLINE Float16 load16(const float* p) {
  Float16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The fixed tree over the lanes: halves added pairwise until one value is left.
SLUICE_ALWAYS_INLINE float lane_tree(float* lanes) {
  for (int width = kLanes / 2; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] = lanes[l] + lanes[l + width];
  }
  return lanes[0];
}

// kTokens x kRows outputs at once: independent accumulators, the same order for each.
template <int kTokens, int kRows>
SLUICE_ALWAYS_INLINE void tile(const float* x, const float* w, int64_t cols, float* y,
                               int64_t ldy) {
  Float16 acc[kTokens][kRows] = {};
  const int64_t full = cols - cols % kLanes;
  for (int64_t k = 0; k < full; k += kLanes) {
    Float16 xv[kTokens];
    for (int t = 0; t < kTokens; ++t) xv[t] = load16(x + t * cols + k);
    for (int r = 0; r < kRows; ++r) {
      const Float16 wv = load16(w + r * cols + k);
      for (int t = 0; t < kTokens; ++t) acc[t][r] += xv[t] * wv;
    }
  }
  for (int t = 0; t < kTokens; ++t) {
    for (int r = 0; r < kRows; ++r) {
      float lanes[kLanes];
      std::memcpy(lanes, &acc[t][r], sizeof lanes);
      for (int64_t k = full; k < cols; ++k) lanes[k - full] += x[t * cols + k] * w[r * cols + k];
      y[t * ldy + r] = lane_tree(lanes);
    }
  }
}

template <int kTokens>
SLUICE_ALWAYS_INLINE void tile_rows(int num_rows, const float* x, const float* w, int64_t cols,
                                    float* y, int64_t ldy) {
  switch (num_rows) {
    case 1:
      return tile<kTokens, 1>(x, w, cols, y, ldy);
    case 2:
      return tile<kTokens, 2>(x, w, cols, y, ldy);
    case 3:
      return tile<kTokens, 3>(x, w, cols, y, ldy);
    default:
      return tile<kTokens, kTileRows>(x, w, cols, y, ldy);
  }
}

SLUICE_ALWAYS_INLINE void any_tile(int num_tokens, int num_rows, const float* x, const float* w,
                                   int64_t cols, float* y, int64_t ldy) {
  switch (num_tokens) {
    case 1:
      return tile_rows<1>(num_rows, x, w, cols, y, ldy);
    case 2:
      return tile_rows<2>(num_rows, x, w, cols, y, ldy);
    case 3:
      return tile_rows<3>(num_rows, x, w, cols, y, ldy);
    default:
      return tile_rows<kTileTokens>(num_rows, x, w, cols, y, ldy);
  }
}

}  // namespace

SLUICE_CPU_CLONES void gemm_nt_fixed_order(const float* x, int64_t num_tokens, const float* w,
                                           int64_t num_rows, int64_t cols, float* y, int64_t ldy) {
  const int64_t block_rows = std::max<int64_t>(
      kTileRows, kBlockBytes / std::max<int64_t>(1, cols * 4) / kTileRows * kTileRows);
  for (int64_t r0 = 0; r0 < num_rows; r0 += block_rows) {
    const int64_t r_end = std::min(num_rows, r0 + block_rows);
    for (int64_t t = 0; t < num_tokens; t += kTileTokens) {
      const auto tokens = static_cast<int>(std::min<int64_t>(kTileTokens, num_tokens - t));
      for (int64_t r = r0; r < r_end; r += kTileRows) {
        const auto rows = static_cast<int>(std::min<int64_t>(kTileRows, r_end - r));
        any_tile(tokens, rows, x + t * cols, w + r * cols, cols, y + t * ldy + r, ldy);
      }
    }
  }
}

const char* cpu_kernel_isa() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
  // The same levels SLUICE_CPU_CLONES compiles for, in the order the loader picks them.
  if (__builtin_cpu_supports("x86-64-v4")) return "AVX-512, x86-64-v4";
  if (__builtin_cpu_supports("x86-64-v3")) return "AVX2 + FMA, x86-64-v3";
  return "baseline x86-64";
#else
  return "portable C++";
#endif
}

}  // namespace sluice
