// The products of quant_linear.cuh. Each format is decoded by kernels/quant_formats.cuh (the same
// values, bit for bit, as the CPU's dequantize_row), a group of 8 consecutive weights at a time.
#include "kernels/quant_linear.cuh"

#include <type_traits>

#include "kernels/dtype_traits.cuh"
#include "kernels/quant_formats.cuh"
#include "kernels/quant_tile_mma.cuh"
#include "kernels/quant_tile_split.cuh"

namespace sluice::kernels {
namespace {

using detail::from_float;
using detail::to_float;
using detail::Vec;
using quant::kGroup;

// Weights stored in T, as groups of 8: the Dense "format".
template <typename T>
struct Dense {
  static constexpr int kBlockElements = kGroup;
  static constexpr int kBlockBytes = kGroup * static_cast<int>(sizeof(T));
  __device__ static void decode(const uint8_t* block, int /*first*/, float (&out)[kGroup]) {
    const auto v = *reinterpret_cast<const Vec<T, kGroup>*>(block);
#pragma unroll
    for (int j = 0; j < kGroup; ++j) out[j] = to_float(v.values[j]);
  }
};

// Values [first, first + kGroup) of a row stored in Format.
template <typename Format>
__device__ __forceinline__ void decode_group(const uint8_t* row, int first, float (&out)[kGroup]) {
  Format::decode(row + static_cast<size_t>(first / Format::kBlockElements) * Format::kBlockBytes,
                 first % Format::kBlockElements, out);
}

// Eight activations as floats: one vector load when the row allows it.
template <typename T>
__device__ __forceinline__ void load_group(const T* src, bool is_packed, float (&out)[kGroup]) {
  if (is_packed) {
    const auto v = *reinterpret_cast<const Vec<T, kGroup>*>(src);
#pragma unroll
    for (int j = 0; j < kGroup; ++j) out[j] = to_float(v.values[j]);
  } else {
#pragma unroll
    for (int j = 0; j < kGroup; ++j) out[j] = to_float(src[j]);
  }
}

// ---- GEMV: up to kGemvTokens tokens per block, one output row per warp -------------------------

constexpr int kGemvWarps = 4;
constexpr int kGemvTokens = 8;

// Grid: (ceil(rows / kGemvWarps), ceil(num_tokens / kGemvTokens)); kGemvWarps warps per block.
template <typename Format, typename T, typename Y>
__global__ void quant_gemv_kernel(const uint8_t* __restrict__ w, size_t row_bytes, int rows,
                                  int cols, const T* __restrict__ x, int x_row_stride,
                                  bool is_x_packed, Y* __restrict__ y, int y_row_stride,
                                  int num_tokens) {
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int row = static_cast<int>(blockIdx.x) * kGemvWarps + warp;
  if (row >= rows) return;  // the whole warp: its shuffles below involve no other warp
  const int t0 = static_cast<int>(blockIdx.y) * kGemvTokens;
  const int n = min(kGemvTokens, num_tokens - t0);
  const uint8_t* w_row = w + static_cast<size_t>(row) * row_bytes;
  const T* x0 = x + static_cast<int64_t>(t0) * x_row_stride;
  float acc[kGemvTokens] = {};
  for (int first = lane * kGroup; first < cols; first += 32 * kGroup) {
    float wv[kGroup];
    decode_group<Format>(w_row, first, wv);
#pragma unroll
    for (int t = 0; t < kGemvTokens; ++t) {
      if (t < n) {
        float xv[kGroup];
        load_group(x0 + static_cast<int64_t>(t) * x_row_stride + first, is_x_packed, xv);
        float s = 0.0f;
#pragma unroll
        for (int j = 0; j < kGroup; ++j) s = fmaf(wv[j], xv[j], s);
        acc[t] += s;
      }
    }
  }
#pragma unroll
  for (int t = 0; t < kGemvTokens; ++t) {
    float s = acc[t];
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
    if (lane == 0 && t < n) y[static_cast<int64_t>(t0 + t) * y_row_stride + row] = from_float<Y>(s);
  }
}

// ---- fp32 tiles: 64 tokens x 64 rows per block, K in steps of 32 (16-bit activations take ----
// ---- quant_tile_mma.cuh's) -------------------------------------------------------------------

constexpr int kTileTokens = 64;
constexpr int kTileRows = 64;
constexpr int kTileK = kQuantTileK;
constexpr int kTileThreads = 128;
constexpr int kTileLd = kTileK + 8;    // padded row of the staged tiles (a multiple of 8)
constexpr int kOutLd = kTileRows + 4;  // padded row of the staged fp32 results

// The staged tiles of one K step, in T: xs[token][k], ws[row][k].
template <typename T>
struct TileStage {
  alignas(128) T xs[kTileTokens * kTileLd];
  alignas(128) T ws[kTileRows * kTileLd];
};

// The tile's fp32 results, staged for the bounds-checked write to y.
struct TileOut {
  alignas(128) float v[kTileTokens * kOutLd];
};

// Stages x[t0.., k0..] (zeros past num_tokens) and the dequantized w[r0.., k0..] (zeros past rows).
template <typename Format, typename T>
__device__ __forceinline__ void stage_tiles(TileStage<T>& s, const uint8_t* w, size_t row_bytes,
                                            int rows, const T* x, int x_row_stride, int num_tokens,
                                            int t0, int r0, int k0) {
  constexpr int kGroupsPerRow = kTileK / kGroup;
  for (int g = static_cast<int>(threadIdx.x); g < kTileTokens * kGroupsPerRow; g += kTileThreads) {
    const int tt = g / kGroupsPerRow, kk = (g % kGroupsPerRow) * kGroup;
    const int t = t0 + tt;
    T* dst = s.xs + tt * kTileLd + kk;
    const T* src = x + static_cast<int64_t>(t) * x_row_stride + k0 + kk;
#pragma unroll
    for (int j = 0; j < kGroup; ++j) dst[j] = t < num_tokens ? src[j] : from_float<T>(0.0f);
  }
  for (int g = static_cast<int>(threadIdx.x); g < kTileRows * kGroupsPerRow; g += kTileThreads) {
    const int rr = g / kGroupsPerRow, kk = (g % kGroupsPerRow) * kGroup;
    float wv[kGroup] = {};
    if (r0 + rr < rows)
      decode_group<Format>(w + static_cast<size_t>(r0 + rr) * row_bytes, k0 + kk, wv);
    T* dst = s.ws + rr * kTileLd + kk;
#pragma unroll
    for (int j = 0; j < kGroup; ++j) dst[j] = from_float<T>(wv[j]);
  }
}

// Each thread: 8 tokens (ty + 8 i) x 4 rows (tx + 16 j) of the tile, in fp32 FMAs.
template <typename T>
struct SimtTile {
  float c[8][4];

  __device__ void zero() {
#pragma unroll
    for (auto& row : c)
#pragma unroll
      for (float& v : row) v = 0.0f;
  }
  __device__ void multiply(const TileStage<T>& s) {
    const int ty = static_cast<int>(threadIdx.x) / 16, tx = static_cast<int>(threadIdx.x) % 16;
#pragma unroll 4
    for (int k = 0; k < kTileK; ++k) {
      float a[8], b[4];
#pragma unroll
      for (int i = 0; i < 8; ++i) a[i] = to_float(s.xs[(ty + 8 * i) * kTileLd + k]);
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = to_float(s.ws[(tx + 16 * j) * kTileLd + k]);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) c[i][j] = fmaf(a[i], b[j], c[i][j]);
    }
  }
  __device__ void store(float* out) {
    const int ty = static_cast<int>(threadIdx.x) / 16, tx = static_cast<int>(threadIdx.x) % 16;
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) out[(ty + 8 * i) * kOutLd + tx + 16 * j] = c[i][j];
  }
};

// Grid: (ceil(rows / kTileRows), ceil(num_tokens / kTileTokens)); kTileThreads threads.
// Precondition: cols is a multiple of kTileK.
template <typename Format, typename T, typename Y>
__global__ void quant_tile_kernel(const uint8_t* __restrict__ w, size_t row_bytes, int rows,
                                  int cols, const T* __restrict__ x, int x_row_stride,
                                  Y* __restrict__ y, int y_row_stride, int num_tokens) {
  __shared__ TileStage<T> stage;
  __shared__ TileOut out;
  const int t0 = static_cast<int>(blockIdx.y) * kTileTokens;
  const int r0 = static_cast<int>(blockIdx.x) * kTileRows;
  SimtTile<T> math;
  math.zero();
  for (int k0 = 0; k0 < cols; k0 += kTileK) {
    stage_tiles<Format>(stage, w, row_bytes, rows, x, x_row_stride, num_tokens, t0, r0, k0);
    __syncthreads();
    math.multiply(stage);
    __syncthreads();
  }
  math.store(out.v);
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < kTileTokens * kTileRows; i += kTileThreads) {
    const int tt = i / kTileRows, rr = i % kTileRows;
    if (t0 + tt < num_tokens && r0 + rr < rows)
      y[static_cast<int64_t>(t0 + tt) * y_row_stride + r0 + rr] =
          from_float<Y>(out.v[tt * kOutLd + rr]);
  }
}

unsigned int ceil_div(int a, int b) {
  return static_cast<unsigned int>((a + b - 1) / b);
}

template <typename Format, typename T, typename Y>
KernelStatus launch_quant_linear(const uint8_t* w, size_t row_bytes, int rows, int cols, const T* x,
                                 int x_row_stride, Y* y, int y_row_stride, int num_tokens,
                                 cudaStream_t stream, int gemv_max_tokens) {
  if (cols % Format::kBlockElements != 0 ||
      row_bytes != static_cast<size_t>(cols / Format::kBlockElements) * Format::kBlockBytes) {
    return detail::invalid_argument();
  }
  if (rows == 0 || num_tokens == 0) return kKernelOk;
  if (num_tokens <= gemv_max_tokens || cols % kTileK != 0) {
    const bool is_x_packed =
        detail::is_aligned(x, alignof(Vec<T, kGroup>)) && x_row_stride % kGroup == 0;
    detail::launch_kernel(quant_gemv_kernel<Format, T, Y>,
                          dim3(ceil_div(rows, kGemvWarps), ceil_div(num_tokens, kGemvTokens)),
                          dim3(32 * kGemvWarps), 0, stream, w, row_bytes, rows, cols, x,
                          x_row_stride, is_x_packed, y, y_row_stride, num_tokens);
  } else if constexpr (!std::is_same_v<T, float>) {
    // 16-bit activations: quant_tile_mma.cuh's tiles. Up to 64 tokens, 16-row blocks whose warps
    // split K (enough blocks to fill the GPU); more, 128 x 64 tiles (the weights decoded once per
    // 128 tokens).
    const bool is_x_packed =
        detail::is_aligned(x, alignof(Vec<T, kGroup>)) && x_row_stride % kGroup == 0;
    const bool by_words = detail::is_aligned(w, 4) && row_bytes % 4 == 0;
    const auto split = [&]<int kTokens>() -> cudaError_t {
      constexpr auto kernel = &tile_mma::quant_tile_split_kernel<Format, T, Y, kTokens>;
      constexpr int kBytes = tile_mma::SplitSmem<T, Format, kTokens>::kBytes;
      const cudaError_t status = detail::allow_dynamic_shared<kernel>(kBytes);
      if (status != cudaSuccess) return status;
      detail::launch_kernel(
          kernel, dim3(ceil_div(num_tokens, kTokens), ceil_div(rows, tile_mma::kSplitRows)),
          dim3(tile_mma::kThreads), kBytes, stream, w, row_bytes, rows, cols, x, x_row_stride,
          is_x_packed, by_words, y, y_row_stride, num_tokens);
      return cudaSuccess;
    };
    cudaError_t status = cudaSuccess;
    if (num_tokens <= 32) {
      status = split.template operator()<32>();
    } else if (num_tokens <= 64) {
      status = split.template operator()<64>();
    } else {
      detail::launch_kernel(tile_mma::quant_tile_mma_kernel<Format, T, Y, 128>,
                            dim3(ceil_div(num_tokens, 128), ceil_div(rows, tile_mma::kRows)),
                            dim3(tile_mma::kThreads), 0, stream, w, row_bytes, rows, cols, x,
                            x_row_stride, is_x_packed, by_words, y, y_row_stride, num_tokens);
    }
    if (status != cudaSuccess) return static_cast<KernelStatus>(status);
  } else {
    detail::launch_kernel(quant_tile_kernel<Format, T, Y>,
                          dim3(ceil_div(rows, kTileRows), ceil_div(num_tokens, kTileTokens)),
                          dim3(kTileThreads), 0, stream, w, row_bytes, rows, cols, x, x_row_stride,
                          y, y_row_stride, num_tokens);
  }
  return detail::launch_status();
}

}  // namespace

template <typename T, typename Y>
KernelStatus quant_linear(QuantFormat format, const uint8_t* w, size_t w_row_bytes, int rows,
                          int cols, const T* x, int x_row_stride, Y* y, int y_row_stride,
                          int num_tokens, cudaStream_t stream, int gemv_max_tokens) {
  if (rows < 0 || cols < 0 || num_tokens < 0) return detail::invalid_argument();
  if (gemv_max_tokens < 0 || gemv_max_tokens > kQuantGemvMaxTokens)
    return detail::invalid_argument();
  if (x_row_stride == 0) x_row_stride = cols;
  if (y_row_stride == 0) y_row_stride = rows;
  if (x_row_stride < cols || y_row_stride < rows) return detail::invalid_argument();
  if (format == QuantFormat::Dense) {
    if (!detail::is_aligned(w, alignof(Vec<T, kGroup>)) || w_row_bytes % alignof(Vec<T, kGroup>))
      return detail::invalid_argument();
    return launch_quant_linear<Dense<T>>(w, w_row_bytes, rows, cols, x, x_row_stride, y,
                                         y_row_stride, num_tokens, stream, gemv_max_tokens);
  }
  KernelStatus status = detail::invalid_argument();
  quant::visit_quant_format(format, [&]<typename Format>(Format) {
    status = launch_quant_linear<Format>(w, w_row_bytes, rows, cols, x, x_row_stride, y,
                                         y_row_stride, num_tokens, stream, gemv_max_tokens);
  });
  return status;
}

#define SLUICE_INSTANTIATE_QUANT_LINEAR(T, Y)                                             \
  template KernelStatus quant_linear<T, Y>(QuantFormat, const uint8_t*, size_t, int, int, \
                                           const T*, int, Y*, int, int, cudaStream_t, int);
SLUICE_INSTANTIATE_QUANT_LINEAR(float, float)
SLUICE_INSTANTIATE_QUANT_LINEAR(__nv_bfloat16, __nv_bfloat16)
SLUICE_INSTANTIATE_QUANT_LINEAR(__nv_bfloat16, float)
SLUICE_INSTANTIATE_QUANT_LINEAR(__half, __half)
SLUICE_INSTANTIATE_QUANT_LINEAR(__half, float)
#undef SLUICE_INSTANTIATE_QUANT_LINEAR

}  // namespace sluice::kernels
