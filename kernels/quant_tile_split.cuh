// The tile kernel of quant_linear for 16-bit activations and up to 64 tokens (private to
// kernels/quant_linear.cu): quant_tile_mma.cuh's staging and decoding, in 16-row blocks whose
// four warps split K.
#pragma once

#include <mma.h>

#include <cstddef>
#include <cstdint>

#include "kernels/launch.cuh"
#include "kernels/quant_tile_staging.cuh"

namespace sluice::kernels::tile_mma {

using detail::from_float;
using detail::to_float;
using detail::Vec;
using quant::kGroup;

// With 32 or 64 tokens a 64-row tile leaves most SMs idle on a 4096-row matrix (64 blocks), and
// each block's steps wait on one another. Here a block owns kSplitRows rows and its four warps
// take every fourth slice of K each, with shared memory of their own (two raw slices, the step's
// activations and weights) and only warp barriers; at the end the four partial sums are added in
// warp order, so a value's sum does not depend on the token count either.

inline constexpr int kSplitRows = 16;
inline constexpr int kWarps = kThreads / 32;
inline constexpr int kSplitOutLd = kSplitRows + 4;

template <typename T, typename Format, int kTokens>
struct SplitSmem {
  static constexpr int kRawBytes = kSplitRows * Slice<Format>::kPitch;
  static constexpr int kXs = 2 * kRawBytes;
  static constexpr int kWs = kXs + kTokens * kLd * static_cast<int>(sizeof(T));
  static constexpr int kWarpBytes = kWs + kSplitRows * kLd * static_cast<int>(sizeof(T));
  static constexpr int kOut = kWarps * kTokens * kSplitOutLd * static_cast<int>(sizeof(float));
  static constexpr int kBytes = kWarps * kWarpBytes > kOut ? kWarps* kWarpBytes : kOut;
  static_assert(kXs % 32 == 0 && kWs % 32 == 0 && kWarpBytes % 32 == 0,
                "WMMA needs 32-byte aligned tiles");
};

// A 128-byte line of dynamic shared memory (its alignment is the tiles').
struct alignas(128) SmemLine {
  uint8_t bytes[128];
};

// decode_step for one warp and kSplitRows rows: lane l the sixteen values 16 (l % 2).. of row
// l / 2.
template <typename Format, typename T>
__device__ __forceinline__ void decode_warp_step(const uint8_t* raw, int lead, T* ws, int rows,
                                                 int r0, int ks, int k_left) {
  static_assert(kSplitRows * kStepK / kUnit == 32, "sixteen values a lane");
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int rr = lane / 2, kk = kUnit * (lane % 2);
  float wv[kUnit] = {};
  if (r0 + rr < rows && kk < k_left)
    decode16<Format>(raw + rr * Slice<Format>::kPitch + lead, ks + kk, wv);
  store16(wv, ws + rr * kLd + kk);
}

#if SLUICE_TILE_MMA_WMMA
// One warp's kTokens x kSplitRows on WMMA fragments.
template <typename T, int kTokens>
struct WarpWmmaMath {
  static constexpr int kFm = kTokens / 16;
  using FragA =
      nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, T, nvcuda::wmma::row_major>;
  using FragB =
      nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, T, nvcuda::wmma::col_major>;
  using FragC = nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float>;
  FragC c[kFm];

  __device__ void zero() {
#pragma unroll
    for (auto& f : c) nvcuda::wmma::fill_fragment(f, 0.0f);
  }
  __device__ void multiply(const T* xs, const T* ws) {
#pragma unroll
    for (int kk = 0; kk < kStepK; kk += 16) {
      FragB b;
      nvcuda::wmma::load_matrix_sync(b, ws + kk, kLd);
#pragma unroll
      for (int i = 0; i < kFm; ++i) {
        FragA a;
        nvcuda::wmma::load_matrix_sync(a, xs + 16 * i * kLd + kk, kLd);
        nvcuda::wmma::mma_sync(c[i], a, b, c[i]);
      }
    }
  }
  __device__ void store(float* out) {
#pragma unroll
    for (int i = 0; i < kFm; ++i)
      nvcuda::wmma::store_matrix_sync(out + 16 * i * kSplitOutLd, c[i], kSplitOutLd,
                                      nvcuda::wmma::mem_row_major);
  }
};
#endif

// fp32 FMAs: lane l owns row l % 16 and tokens l / 16 + 2 i.
template <typename T, int kTokens>
struct WarpSimtMath {
  static constexpr int kFm = kTokens / 2;
  float c[kFm];

  __device__ void zero() {
#pragma unroll
    for (float& v : c) v = 0.0f;
  }
  __device__ void multiply(const T* xs, const T* ws) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int rr = lane % 16, tt = lane / 16;
    for (int k = 0; k < kStepK; ++k) {
      const float b = to_float(ws[rr * kLd + k]);
#pragma unroll
      for (int i = 0; i < kFm; ++i) c[i] = fmaf(to_float(xs[(tt + 2 * i) * kLd + k]), b, c[i]);
    }
  }
  __device__ void store(float* out) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int rr = lane % 16, tt = lane / 16;
#pragma unroll
    for (int i = 0; i < kFm; ++i) out[(tt + 2 * i) * kSplitOutLd + rr] = c[i];
  }
};

#if SLUICE_TILE_MMA_WMMA
template <typename T, int kTokens>
using WarpMath = WarpWmmaMath<T, kTokens>;
#else
template <typename T, int kTokens>
using WarpMath = WarpSimtMath<T, kTokens>;
#endif

// Grid: (ceil(num_tokens / kTokens), ceil(rows / kSplitRows)); kThreads threads;
// SplitSmem::kBytes of dynamic shared memory. Precondition: cols is a multiple of kStepK.
template <typename Format, typename T, typename Y, int kTokens>
__global__ void __launch_bounds__(kThreads)
    quant_tile_split_kernel(const uint8_t* __restrict__ w, size_t row_bytes, int rows, int cols,
                            const T* __restrict__ x, int x_row_stride, bool is_x_packed,
                            bool by_words, Y* __restrict__ y, int y_row_stride, int num_tokens) {
  using S = Slice<Format>;
  using M = SplitSmem<T, Format, kTokens>;
  SLUICE_DYNAMIC_SHARED(SmemLine, split_lines);
  auto* smem = reinterpret_cast<uint8_t*>(split_lines);
  const int warp = static_cast<int>(threadIdx.x) / 32;
  uint8_t* mine = smem + warp * M::kWarpBytes;
  T* xs = reinterpret_cast<T*>(mine + M::kXs);
  T* ws = reinterpret_cast<T*>(mine + M::kWs);
  const int t0 = static_cast<int>(blockIdx.x) * kTokens;
  const int r0 = static_cast<int>(blockIdx.y) * kSplitRows;
  const int num_slices = (cols + S::kValues - 1) / S::kValues;

  WarpMath<T, kTokens> math;
  math.zero();
  const int lane = static_cast<int>(threadIdx.x) % 32;
  StepActivations<T, kTokens, 32> next;
  next.load(x, x_row_stride, is_x_packed, num_tokens, t0, warp * S::kValues, cols, lane);
  if (warp < num_slices) {
    copy_slice<Format, kSplitRows, 32>(mine, w, row_bytes, rows, r0, warp * S::kValues, cols,
                                       by_words, lane);
    commit_copies();
  }
  for (int s = warp, i = 0; s < num_slices; s += kWarps, ++i) {
    const int k0 = s * S::kValues;
    // Every lane is past the decode of the slice before (the warp barrier ending its last step).
    if (s + kWarps < num_slices) {
      copy_slice<Format, kSplitRows, 32>(mine + ((i + 1) % 2) * M::kRawBytes, w, row_bytes, rows,
                                         r0, k0 + kWarps * S::kValues, cols, by_words, lane);
      commit_copies();
      wait_copies<1>();
    } else {
      wait_copies<0>();
    }
    __syncwarp();
    const uint8_t* raw = mine + (i % 2) * M::kRawBytes;
    const int lead = by_words ? static_cast<int>(start_byte<Format>(k0) % 4) : 0;
    const int values = min(S::kValues, cols - k0);
    for (int ks = 0; ks < values; ks += kStepK) {
      next.store(xs, lane);
      decode_warp_step<Format>(raw, lead, ws, rows, r0, ks, values - ks);
      const int k_next = ks + kStepK < values ? k0 + ks + kStepK : k0 + kWarps * S::kValues;
      next.load(x, x_row_stride, is_x_packed, num_tokens, t0, k_next, cols, lane);
      __syncwarp();
      math.multiply(xs, ws);
      __syncwarp();
    }
  }
  __syncthreads();  // every warp is done with its buffers: the partial sums take them
  auto* out = reinterpret_cast<float*>(smem);
  math.store(out + warp * kTokens * kSplitOutLd);
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < kTokens * kSplitRows; i += kThreads) {
    const int tt = i / kSplitRows, rr = i % kSplitRows;
    if (t0 + tt >= num_tokens || r0 + rr >= rows) continue;
    float sum = out[tt * kSplitOutLd + rr];
#pragma unroll
    for (int v = 1; v < kWarps; ++v) sum += out[(v * kTokens + tt) * kSplitOutLd + rr];
    y[static_cast<int64_t>(t0 + tt) * y_row_stride + r0 + rr] = from_float<Y>(sum);
  }
}

}  // namespace sluice::kernels::tile_mma
