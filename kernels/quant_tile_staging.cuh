// What the tile kernels of quant_linear (quant_tile_mma.cuh, quant_tile_split.cuh; private to
// kernels/quant_linear.cu) share: the K slice a block copies at once, the copy of the rows' raw
// block bytes into shared memory (cp.async a word at a time where the rows are 4-byte aligned,
// else byte by byte, same values), and a step's activations staged from registers loaded a step
// ahead; quant_decode16.cuh decodes the staged bytes.
#pragma once

#include <mma.h>

#include <cstddef>
#include <cstdint>

#include "kernels/dtype_traits.cuh"
#include "kernels/quant_decode16.cuh"
#include "kernels/quant_formats.cuh"

#if defined(SLUICE_KERNEL_EMULATOR) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800)
#define SLUICE_TILE_MMA_WMMA 1
#else
#define SLUICE_TILE_MMA_WMMA 0
#endif
#if !defined(SLUICE_KERNEL_EMULATOR) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define SLUICE_TILE_MMA_CP_ASYNC 1
#else
#define SLUICE_TILE_MMA_CP_ASYNC 0
#endif

namespace sluice::kernels::tile_mma {

using detail::from_float;
using detail::to_float;
using detail::Vec;
using quant::kGroup;

inline constexpr int kThreads = 128;      // four warps, 2 x 2 over the tile
inline constexpr int kRows = 64;          // weight rows (output columns) of a block
inline constexpr int kStepK = 32;         // values decoded and multiplied at a time
inline constexpr int kLd = kStepK + 8;    // padded row of the staged T tiles
inline constexpr int kOutLd = kRows + 4;  // padded row of the staged fp32 results
inline constexpr int kStepGroups = kStepK / kGroup;

// The K range a block copies at once, in Format's blocks: one contiguous byte range per row.
template <typename Format>
struct Slice {
  static constexpr int kValues = Format::kBlockElements == 256      ? 256
                                 : Format::kBlockElements == kGroup ? 64
                                                                    : 128;
  static constexpr int kBytes = kValues / Format::kBlockElements * Format::kBlockBytes;
  static constexpr int kWords = kBytes / 4 + 2;  // 4-byte words a row's range can touch
  static constexpr int kPitch = (kWords * 4 + 15) / 16 * 16;
};

// The byte of a row where value k0's block starts.
template <typename Format>
__device__ __forceinline__ size_t start_byte(int k0) {
  return static_cast<size_t>(k0 / Format::kBlockElements) * Format::kBlockBytes;
}

__device__ __forceinline__ void copy_word(uint32_t* dst_shared, const uint32_t* src) {
#if SLUICE_TILE_MMA_CP_ASYNC
  const auto dst = static_cast<unsigned>(__cvta_generic_to_shared(dst_shared));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src));
#else
  *dst_shared = *src;
#endif
}

__device__ __forceinline__ void commit_copies() {
#if SLUICE_TILE_MMA_CP_ASYNC
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Waits until at most kPending committed groups of this thread's copies are in flight.
template <int kPending>
__device__ __forceinline__ void wait_copies() {
#if SLUICE_TILE_MMA_CP_ASYNC
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
#endif
}

// Starts copying the raw bytes of values [k0, min(k0 + kValues, cols)) of kSliceRows rows r0..
// into raw (row rr at rr * kPitch; with whole words, the range's first byte at (range start) % 4),
// by kLanes threads of which this is `lane`. Rows past `rows` are not copied: their decode writes
// zeros.
template <typename Format, int kSliceRows, int kLanes>
__device__ __forceinline__ void copy_slice(uint8_t* raw, const uint8_t* w, size_t row_bytes,
                                           int rows, int r0, int k0, int cols, bool by_words,
                                           int lane) {
  using S = Slice<Format>;
  const int values = min(S::kValues, cols - k0);
  const int bytes = values / Format::kBlockElements * Format::kBlockBytes;
  const size_t start = start_byte<Format>(k0);
  if (by_words) {
    // The row's base is 4-byte aligned and so is its end, so the words never leave the row.
    const int lead = static_cast<int>(start % 4);
    const int words = (lead + bytes + 3) / 4;
    for (int i = lane; i < kSliceRows * S::kWords; i += kLanes) {
      const int rr = i / S::kWords, word = i % S::kWords;
      if (word >= words || r0 + rr >= rows) continue;
      const auto* src = reinterpret_cast<const uint32_t*>(
          w + static_cast<size_t>(r0 + rr) * row_bytes + (start - static_cast<size_t>(lead)));
      copy_word(reinterpret_cast<uint32_t*>(raw + rr * S::kPitch) + word, src + word);
    }
  } else {
    for (int i = lane; i < kSliceRows * S::kBytes; i += kLanes) {
      const int rr = i / S::kBytes, b = i % S::kBytes;
      if (b >= bytes || r0 + rr >= rows) continue;
      raw[rr * S::kPitch + b] = w[static_cast<size_t>(r0 + rr) * row_bytes + start + b];
    }
  }
}

// The groups of a step's activations (kTokens x kStepK values) one of kLanes threads holds:
// group g = lane + kLanes * i is token g / kStepGroups, values kGroup * (g % kStepGroups) on.
template <typename T, int kTokens, int kLanes>
struct StepActivations {
  static constexpr int kGroups = kTokens * kStepGroups / kLanes;
  Vec<T, kGroup> v[kGroups];

  __device__ void load(const T* x, int x_row_stride, bool is_packed, int num_tokens, int t0, int k,
                       int cols, int lane) {
#pragma unroll
    for (int i = 0; i < kGroups; ++i) {
      const int g = lane + kLanes * i;
      const int t = t0 + g / kStepGroups, kk = k + kGroup * (g % kStepGroups);
      if (t < num_tokens && kk < cols) {
        const T* src = x + static_cast<int64_t>(t) * x_row_stride + kk;
        if (is_packed) {
          v[i] = *reinterpret_cast<const Vec<T, kGroup>*>(src);
        } else {
#pragma unroll
          for (int j = 0; j < kGroup; ++j) v[i].values[j] = src[j];
        }
      } else {
#pragma unroll
        for (int j = 0; j < kGroup; ++j) v[i].values[j] = from_float<T>(0.0f);
      }
    }
  }
  __device__ void store(T* xs, int lane) const {
#pragma unroll
    for (int i = 0; i < kGroups; ++i) {
      const int g = lane + kLanes * i;
      *reinterpret_cast<Vec<T, kGroup>*>(xs + (g / kStepGroups) * kLd +
                                         kGroup * (g % kStepGroups)) = v[i];
    }
  }
};

}  // namespace sluice::kernels::tile_mma
