// The tile kernel of quant_linear for 16-bit activations and more than 64 tokens (private to
// kernels/quant_linear.cu): products straight from a weight's blocks, on the tensor cores.
//
// A block owns 128 tokens x kRows weight rows and walks K a slice at a time:
// the slice's raw block bytes (a 256-value super-block, or 128 values of a 32-value format, of
// each of the 64 rows: one contiguous range per row) are copied into shared memory with cp.async
// while the block multiplies the slice before it, so the weights stream from memory once per
// token tile without a register file's worth of loads in flight per thread. Each 32-value step of
// the slice is decoded from shared memory into T (the values quant_formats.cuh's decode gives,
// rounded to T as a widened matrix would be), the tokens' activations for it are staged beside
// it (loaded into registers a step ahead), and four warps multiply the two on WMMA fragments
// with fp32 accumulation. A value's sum runs over K in the same 16-value steps whatever the
// tile, the token count or the token's place in it, so a token's outputs do not depend on its
// neighbours. Fewer tokens take quant_tile_split.cuh's blocks.
//
// Without WMMA for T (before sm_80) the same staging feeds fp32 FMAs.
#pragma once

#include <mma.h>

#include <cstddef>
#include <cstdint>

#include "kernels/quant_tile_staging.cuh"

namespace sluice::kernels::tile_mma {

using detail::from_float;
using detail::to_float;
using detail::Vec;
using quant::kGroup;

// Shared memory: two raw slices, the staged activations and weights of one step; the fp32
// results reuse it at the end.
template <typename T, typename Format, int kTokens>
struct Smem {
  static constexpr int kRawBytes = kRows * Slice<Format>::kPitch;
  static constexpr int kXs = 2 * kRawBytes;
  static constexpr int kWs = kXs + kTokens * kLd * static_cast<int>(sizeof(T));
  static constexpr int kInputs = kWs + kRows * kLd * static_cast<int>(sizeof(T));
  static constexpr int kOut = kTokens * kOutLd * static_cast<int>(sizeof(float));
  static constexpr int kBytes = kInputs > kOut ? kInputs : kOut;
  static_assert(kBytes <= 48 * 1024, "static shared memory");
  struct alignas(128) Storage {
    uint8_t bytes[kBytes];
  };
  static_assert(kXs % 32 == 0 && kWs % 32 == 0, "WMMA needs 32-byte aligned tiles");
};

// Decodes values [ks, ks + kStepK) of the raw slice (zeros past `rows` and past cols) into ws:
// thread t the sixteen values 16 (t % 2).. of row t / 2.
template <typename Format, typename T>
__device__ __forceinline__ void decode_step(const uint8_t* raw, int lead, T* ws, int rows, int r0,
                                            int ks, int k_left) {
  static_assert(kRows * kStepK / kUnit == kThreads, "sixteen values a thread");
  const int rr = static_cast<int>(threadIdx.x) / 2,
            kk = kUnit * (static_cast<int>(threadIdx.x) % 2);
  float wv[kUnit] = {};
  if (r0 + rr < rows && kk < k_left)
    decode16<Format>(raw + rr * Slice<Format>::kPitch + lead, ks + kk, wv);
  store16(wv, ws + rr * kLd + kk);
}

#if SLUICE_TILE_MMA_WMMA
// Warp (wm, wn) of the 2 x 2: tokens wm * kTokens / 2.., rows wn * 32.., as kFm x 2 fragments.
template <typename T, int kTokens>
struct WmmaMath {
  static constexpr int kFm = kTokens / 32;
  using FragA =
      nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, T, nvcuda::wmma::row_major>;
  using FragB =
      nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, T, nvcuda::wmma::col_major>;
  using FragC = nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float>;
  FragC c[kFm][2];

  __device__ static int token0() { return (static_cast<int>(threadIdx.x) / 64) * (kTokens / 2); }
  __device__ static int row0() { return ((static_cast<int>(threadIdx.x) / 32) % 2) * 32; }

  __device__ void zero() {
#pragma unroll
    for (auto& row : c)
#pragma unroll
      for (auto& f : row) nvcuda::wmma::fill_fragment(f, 0.0f);
  }
  __device__ void multiply(const T* xs, const T* ws) {
    const int tm = token0(), rn = row0();
#pragma unroll
    for (int kk = 0; kk < kStepK; kk += 16) {
      FragB b[2];
#pragma unroll
      for (int j = 0; j < 2; ++j)
        nvcuda::wmma::load_matrix_sync(b[j], ws + (rn + 16 * j) * kLd + kk, kLd);
#pragma unroll
      for (int i = 0; i < kFm; ++i) {
        FragA a;
        nvcuda::wmma::load_matrix_sync(a, xs + (tm + 16 * i) * kLd + kk, kLd);
#pragma unroll
        for (int j = 0; j < 2; ++j) nvcuda::wmma::mma_sync(c[i][j], a, b[j], c[i][j]);
      }
    }
  }
  __device__ void store(float* out) {
    const int tm = token0(), rn = row0();
#pragma unroll
    for (int i = 0; i < kFm; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j)
        nvcuda::wmma::store_matrix_sync(out + (tm + 16 * i) * kOutLd + rn + 16 * j, c[i][j], kOutLd,
                                        nvcuda::wmma::mem_row_major);
  }
};
#endif

// fp32 FMAs: thread (ty, tx) of 8 x 16 owns tokens ty + 8 i and rows tx + 16 j.
template <typename T, int kTokens>
struct SimtMath {
  static constexpr int kFm = kTokens / 8;
  float c[kFm][4];

  __device__ void zero() {
#pragma unroll
    for (auto& row : c)
#pragma unroll
      for (float& v : row) v = 0.0f;
  }
  __device__ void multiply(const T* xs, const T* ws) {
    const int ty = static_cast<int>(threadIdx.x) / 16, tx = static_cast<int>(threadIdx.x) % 16;
    for (int k = 0; k < kStepK; ++k) {
      float b[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = to_float(ws[(tx + 16 * j) * kLd + k]);
#pragma unroll
      for (int i = 0; i < kFm; ++i) {
        const float a = to_float(xs[(ty + 8 * i) * kLd + k]);
#pragma unroll
        for (int j = 0; j < 4; ++j) c[i][j] = fmaf(a, b[j], c[i][j]);
      }
    }
  }
  __device__ void store(float* out) {
    const int ty = static_cast<int>(threadIdx.x) / 16, tx = static_cast<int>(threadIdx.x) % 16;
#pragma unroll
    for (int i = 0; i < kFm; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) out[(ty + 8 * i) * kOutLd + tx + 16 * j] = c[i][j];
  }
};

#if SLUICE_TILE_MMA_WMMA
template <typename T, int kTokens>
using TileMath = WmmaMath<T, kTokens>;
#else
template <typename T, int kTokens>
using TileMath = SimtMath<T, kTokens>;
#endif

// Grid: (ceil(num_tokens / kTokens), ceil(rows / kRows)); kThreads threads. The token tiles of
// one row range are neighbours in the grid, so they read its blocks from L2 more than memory.
// Precondition: cols is a multiple of kStepK.
template <typename Format, typename T, typename Y, int kTokens>
__global__ void __launch_bounds__(kThreads)
    quant_tile_mma_kernel(const uint8_t* __restrict__ w, size_t row_bytes, int rows, int cols,
                          const T* __restrict__ x, int x_row_stride, bool is_x_packed,
                          bool by_words, Y* __restrict__ y, int y_row_stride, int num_tokens) {
  using S = Slice<Format>;
  using M = Smem<T, Format, kTokens>;
  __shared__ typename M::Storage storage;
  uint8_t* smem = storage.bytes;
  T* xs = reinterpret_cast<T*>(smem + M::kXs);
  T* ws = reinterpret_cast<T*>(smem + M::kWs);
  const int t0 = static_cast<int>(blockIdx.x) * kTokens;
  const int r0 = static_cast<int>(blockIdx.y) * kRows;
  const int num_slices = (cols + S::kValues - 1) / S::kValues;

  TileMath<T, kTokens> math;
  math.zero();
  const int tid = static_cast<int>(threadIdx.x);
  StepActivations<T, kTokens, kThreads> next;
  next.load(x, x_row_stride, is_x_packed, num_tokens, t0, 0, cols, tid);
  copy_slice<Format, kRows, kThreads>(smem, w, row_bytes, rows, r0, 0, cols, by_words, tid);
  commit_copies();
  for (int s = 0; s < num_slices; ++s) {
    const int k0 = s * S::kValues;
    // Every thread is past the last slice's decode (the barrier ending its last step), so the
    // buffer the next slice goes to is free.
    if (s + 1 < num_slices) {
      copy_slice<Format, kRows, kThreads>(smem + ((s + 1) % 2) * M::kRawBytes, w, row_bytes, rows,
                                          r0, k0 + S::kValues, cols, by_words, tid);
      commit_copies();
      wait_copies<1>();
    } else {
      wait_copies<0>();
    }
    __syncthreads();
    const uint8_t* raw = smem + (s % 2) * M::kRawBytes;
    const int lead = by_words ? static_cast<int>(start_byte<Format>(k0) % 4) : 0;
    const int values = min(S::kValues, cols - k0);
    for (int ks = 0; ks < values; ks += kStepK) {
      next.store(xs, tid);
      decode_step<Format>(raw, lead, ws, rows, r0, ks, values - ks);
      next.load(x, x_row_stride, is_x_packed, num_tokens, t0, k0 + ks + kStepK, cols, tid);
      __syncthreads();
      math.multiply(xs, ws);
      __syncthreads();
    }
  }
  auto* out = reinterpret_cast<float*>(smem);
  math.store(out);
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < kTokens * kRows; i += kThreads) {
    const int tt = i / kRows, rr = i % kRows;
    if (t0 + tt < num_tokens && r0 + rr < rows)
      y[static_cast<int64_t>(t0 + tt) * y_row_stride + r0 + rr] =
          from_float<Y>(out[tt * kOutLd + rr]);
  }
}

}  // namespace sluice::kernels::tile_mma
