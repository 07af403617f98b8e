// The integer tiles of quant_mmq.cuh. Shared memory holds one K slice (eight 32-value blocks) of
// the tile's weight rows and tokens as words of four signed bytes, rows padded by four words so
// that the 32 lanes of a fragment load hit 32 banks, and each block's scales as floats, block by
// block (a fragment's eight rows or tokens side by side).
#include "kernels/quant_mmq.cuh"

#include <algorithm>
#include <type_traits>

#include "kernels/dtype_traits.cuh"
#include "kernels/launch.cuh"
#include "kernels/mma_int8.cuh"
#include "kernels/quant_int8_formats.cuh"

namespace sluice::kernels {
namespace {

using detail::from_float;
using namespace int8_formats;  // NOLINT: the formats of this kernel's products

constexpr int kThreads = 128;                 // four warps: 2 over the rows x 2 over the tokens
constexpr int kTileTokens = 64;               // tokens of a tile
constexpr int kWarpTokenTiles = 4;            // 8-token fragments of a warp: 32 tokens
constexpr int kSliceBlocks = 8;               // 32-value blocks of a K slice
constexpr int kPitch = kSliceBlocks * 8 + 4;  // words of a staged row or token

// Formats whose 16-value halves have scales of their own: two k16 products per block.
template <typename Format>
constexpr bool kSplitHalves = std::is_same_v<Format, Q6_K>;
// Formats with a min (a term m * dx * sum(qx) per block); the others' m is 0 and is not read.
template <typename Format>
constexpr bool kHasMin = std::is_same_v<Format, Q4_1> || std::is_same_v<Format, Q5_1> ||
                         std::is_same_v<Format, Q4_K> || std::is_same_v<Format, Q5_K>;

template <int kRows>
struct MmqSmem {
  alignas(16) uint32_t wq[kRows * kPitch];
  alignas(16) uint32_t xq[kTileTokens * kPitch];
  float w_lo[kSliceBlocks * kRows];  // [block][row]
  float w_hi[kSliceBlocks * kRows];
  float w_m[kSliceBlocks * kRows];
  Q8Scale xs[kSliceBlocks * kTileTokens];  // [block][token]
};

// Blocks b0.. (up to kSliceBlocks) of rows r0..: unpacked bytes and scales; zeros past the rows
// and from block_end on.
template <typename Format, int kRows>
__device__ __forceinline__ void stage_weights(MmqSmem<kRows>& s, const uint8_t* w, size_t row_bytes,
                                              int rows, int r0, int b0, int block_end) {
  for (int i = static_cast<int>(threadIdx.x); i < kRows * kSliceBlocks; i += kThreads) {
    const int rr = i / kSliceBlocks, bb = i % kSliceBlocks;
    const int b = b0 + bb;
    Unpacked u{};
    if (r0 + rr < rows && b < block_end) {
      Format::unpack(w + static_cast<size_t>(r0 + rr) * row_bytes +
                         static_cast<size_t>(b / Format::kBlocks) * Format::kBytes,
                     b % Format::kBlocks, u);
    }
    auto* dst = reinterpret_cast<uint4*>(s.wq + rr * kPitch + 8 * bb);
    dst[0] = uint4{static_cast<uint32_t>(u.q[0]), static_cast<uint32_t>(u.q[1]),
                   static_cast<uint32_t>(u.q[2]), static_cast<uint32_t>(u.q[3])};
    dst[1] = uint4{static_cast<uint32_t>(u.q[4]), static_cast<uint32_t>(u.q[5]),
                   static_cast<uint32_t>(u.q[6]), static_cast<uint32_t>(u.q[7])};
    s.w_lo[bb * kRows + rr] = u.d_lo;
    s.w_hi[bb * kRows + rr] = u.d_hi;
    s.w_m[bb * kRows + rr] = u.m;
  }
}

// The same blocks of tokens t0..: bytes in 16-byte pieces, scales; zeros past the tokens and from
// block_end on.
template <int kRows>
__device__ __forceinline__ void stage_activations(MmqSmem<kRows>& s, const Q8Rows& x, int t0,
                                                  int b0, int block_end) {
  constexpr int kPieces = 2 * kSliceBlocks;
  const int num_blocks = x.cols / 32;
  for (int i = static_cast<int>(threadIdx.x); i < kTileTokens * kPieces; i += kThreads) {
    const int tt = i / kPieces, p = i % kPieces;
    const int b = b0 + p / 2;
    uint4 v{0u, 0u, 0u, 0u};
    if (t0 + tt < x.num_tokens && b < block_end) {
      v = *reinterpret_cast<const uint4*>(x.qs + static_cast<int64_t>(t0 + tt) * x.cols + 32 * b +
                                          16 * (p % 2));
    }
    *reinterpret_cast<uint4*>(s.xq + tt * kPitch + 4 * p) = v;
  }
  for (int i = static_cast<int>(threadIdx.x); i < kTileTokens * kSliceBlocks; i += kThreads) {
    const int tt = i / kSliceBlocks, bb = i % kSliceBlocks, b = b0 + bb;
    s.xs[bb * kTileTokens + tt] = t0 + tt < x.num_tokens && b < block_end
                                      ? x.scales[static_cast<int64_t>(t0 + tt) * num_blocks + b]
                                      : Q8Scale{0.0f, 0.0f};
  }
}

// One warp's kRowTiles x 16 rows (row0..) by 32 tokens (tok0..) in fp32: acc[i][j][e] is row
// row0 + 16 i + g + 8 (e / 2), token tok0 + 8 j + 2 t + e % 2 of lane 4 g + t.
template <typename Format, int kRowTiles>
struct MmqWarp {
  float acc[kRowTiles][kWarpTokenTiles][4];

  __device__ void zero() {
#pragma unroll
    for (auto& tile : acc)
#pragma unroll
      for (auto& frag : tile)
#pragma unroll
        for (float& v : frag) v = 0.0f;
  }

  template <int kRows>
  __device__ void multiply(const MmqSmem<kRows>& s, int row0, int tok0, int lane) {
    const int g = lane / 4, t = lane % 4;
#pragma unroll 2
    for (int bb = 0; bb < kSliceBlocks; ++bb) {
      uint32_t a[kRowTiles][4];
      float lo[kRowTiles][2], hi[kRowTiles][2] = {}, m[kRowTiles][2] = {};
#pragma unroll
      for (int i = 0; i < kRowTiles; ++i) {
        const int r = row0 + 16 * i + g;
        a[i][0] = s.wq[r * kPitch + 8 * bb + t];
        a[i][1] = s.wq[(r + 8) * kPitch + 8 * bb + t];
        a[i][2] = s.wq[r * kPitch + 8 * bb + 4 + t];
        a[i][3] = s.wq[(r + 8) * kPitch + 8 * bb + 4 + t];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int at = bb * kRows + r + 8 * h;
          lo[i][h] = s.w_lo[at];
          if constexpr (kSplitHalves<Format>) hi[i][h] = s.w_hi[at];
          if constexpr (kHasMin<Format>) m[i][h] = s.w_m[at];
        }
      }
#pragma unroll
      for (int j = 0; j < kWarpTokenTiles; ++j) {
        const int column = tok0 + 8 * j + g;
        const uint32_t b[2] = {s.xq[column * kPitch + 8 * bb + t],
                               s.xq[column * kPitch + 8 * bb + 4 + t]};
        const int token = tok0 + 8 * j + 2 * t;
        const Q8Scale xs[2] = {s.xs[bb * kTileTokens + token], s.xs[bb * kTileTokens + token + 1]};
#pragma unroll
        for (int i = 0; i < kRowTiles; ++i) {
          float sums[4];
          if constexpr (kSplitHalves<Format>) {
            int c_lo[4] = {}, c_hi[4] = {};
            const uint32_t a_lo[2] = {a[i][0], a[i][1]}, a_hi[2] = {a[i][2], a[i][3]};
            mma_s8_k16(c_lo, a_lo, b[0]);
            mma_s8_k16(c_hi, a_hi, b[1]);
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              sums[e] = fmaf(hi[i][e / 2], static_cast<float>(c_hi[e]),
                             lo[i][e / 2] * static_cast<float>(c_lo[e]));
            }
          } else {
            int c[4] = {};
            mma_s8_k32(c, a[i], b);
#pragma unroll
            for (int e = 0; e < 4; ++e) sums[e] = lo[i][e / 2] * static_cast<float>(c[e]);
          }
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const Q8Scale& x = xs[e % 2];
            if constexpr (kHasMin<Format>) {
              acc[i][j][e] = fmaf(m[i][e / 2], x.d_sum, fmaf(x.d, sums[e], acc[i][j][e]));
            } else {
              acc[i][j][e] = fmaf(x.d, sums[e], acc[i][j][e]);
            }
          }
        }
      }
    }
  }

  // Into y, or in fp32 into partials ([num_tokens, rows]) when that is not null.
  template <typename Y>
  __device__ void store(Y* y, int y_row_stride, float* partials, int rows, int num_tokens, int r,
                        int tk, int lane) const {
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int i = 0; i < kRowTiles; ++i) {
#pragma unroll
      for (int j = 0; j < kWarpTokenTiles; ++j) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int row = r + 16 * i + g + 8 * (e / 2);
          const int token = tk + 8 * j + 2 * t + e % 2;
          if (row >= rows || token >= num_tokens) continue;
          if (partials) {
            partials[static_cast<int64_t>(token) * rows + row] = acc[i][j][e];
          } else {
            y[static_cast<int64_t>(token) * y_row_stride + row] = from_float<Y>(acc[i][j][e]);
          }
        }
      }
    }
  }
};

// Grid: (ceil(rows / (32 kRowTiles)), ceil(num_tokens / kTileTokens), parts); kThreads threads.
// Part z takes slices [z, z + 1) * slices_per_part of K and, with more than one part, writes its
// fp32 sums to partials + z * num_tokens * rows (null: one part, into y). Four blocks an SM at
// least (their shared memory allows five): up to 128 registers a thread.
template <typename Format, typename Y, int kRowTiles>
__global__ void __launch_bounds__(kThreads, 4)
    quant_mmq_kernel(const uint8_t* __restrict__ w, size_t row_bytes, int rows, Q8Rows x,
                     Y* __restrict__ y, int y_row_stride, int slices_per_part,
                     float* __restrict__ partials) {
  constexpr int kRows = 2 * 16 * kRowTiles;
  __shared__ MmqSmem<kRows> s;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int r0 = static_cast<int>(blockIdx.x) * kRows;
  const int t0 = static_cast<int>(blockIdx.y) * kTileTokens;
  const int row0 = (warp % 2) * 16 * kRowTiles, tok0 = (warp / 2) * 32;
  // A warp whose tokens are all past the end stages its share and multiplies nothing (the
  // whole warp: its fragments involve no other).
  const bool has_tokens = t0 + tok0 < x.num_tokens;
  const int part = static_cast<int>(blockIdx.z);
  const int block_begin = part * slices_per_part * kSliceBlocks;
  const int block_end = min(x.cols / 32, block_begin + slices_per_part * kSliceBlocks);
  MmqWarp<Format, kRowTiles> math;
  math.zero();
  for (int b0 = block_begin; b0 < block_end; b0 += kSliceBlocks) {
    stage_weights<Format>(s, w, row_bytes, rows, r0, b0, block_end);
    stage_activations(s, x, t0, b0, block_end);
    __syncthreads();
    if (has_tokens) math.multiply(s, row0, tok0, lane);
    __syncthreads();
  }
  float* mine = partials ? partials + static_cast<int64_t>(part) * x.num_tokens * rows : nullptr;
  if (has_tokens) math.store(y, y_row_stride, mine, rows, x.num_tokens, r0 + row0, t0 + tok0, lane);
}

constexpr int kAddThreads = 256;

// y[t, r] = the parts' sums of (t, r) added in part order.
template <typename Y>
__global__ void add_parts_kernel(const float* __restrict__ partials, int parts, int num_tokens,
                                 int rows, Y* __restrict__ y, int y_row_stride) {
  const int64_t n = static_cast<int64_t>(num_tokens) * rows;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kAddThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kAddThreads + threadIdx.x; i < n;
       i += stride) {
    float sum = partials[i];
    for (int z = 1; z < parts; ++z) sum += partials[z * n + i];
    y[i / rows * y_row_stride + i % rows] = from_float<Y>(sum);
  }
}

unsigned int ceil_div(int a, int b) {
  return static_cast<unsigned int>((a + b - 1) / b);
}

constexpr int kMostTokenTiles = 65535;  // gridDim.y

}  // namespace

bool has_quant_mmq(QuantFormat format) {
  return int8_formats::visit_int8_format(format, [](auto) {});
}

int quant_mmq_parts(int rows, int cols, int sms) {
  if (rows <= 0 || cols <= 0 || sms <= 0) return 1;
  const int slices = (cols / 32 + kSliceBlocks - 1) / kSliceBlocks;
  const int tiles = (rows + 31) / 32;  // the 32-row tiles of up to 64 tokens
  const int wanted = (kMmqBlocksPerSm * sms + tiles - 1) / tiles;
  return std::clamp(std::min(wanted, slices / kMmqSlicesPerPart), 1, kMmqMostParts);
}

size_t quant_mmq_partial_floats(int rows, int num_tokens, int parts) {
  return parts > 1 ? static_cast<size_t>(parts) * rows * num_tokens : 0;
}

template <typename Y>
KernelStatus quant_mmq(QuantFormat format, const uint8_t* w, size_t w_row_bytes, int rows,
                       const Q8Rows& x, Y* y, int y_row_stride, cudaStream_t stream,
                       MmqSplit split) {
  if (rows < 0 || x.num_tokens < 0 || x.cols % 32 != 0 ||
      x.num_tokens > kMostTokenTiles * kTileTokens || split.parts < 1 ||
      split.parts > kMmqMostParts || (split.parts > 1 && !split.partials)) {
    return detail::invalid_argument();
  }
  if (y_row_stride == 0) y_row_stride = rows;
  if (y_row_stride < rows) return detail::invalid_argument();
  KernelStatus status = detail::invalid_argument();
  visit_int8_format(format, [&]<typename Format>(Format) {
    if (!is_whole_blocks<Format>(x.cols, w_row_bytes)) return;
    if (rows == 0 || x.num_tokens == 0) {
      status = kKernelOk;
      return;
    }
    const int slices = (x.cols / 32 + kSliceBlocks - 1) / kSliceBlocks;
    const int per_part = (slices + split.parts - 1) / split.parts;
    const int parts = (slices + per_part - 1) / per_part;  // none of them empty
    float* partials = parts > 1 ? split.partials : nullptr;
    const unsigned int token_tiles = ceil_div(x.num_tokens, kTileTokens);
    const auto z = static_cast<unsigned int>(parts);
    if (x.num_tokens <= kTileTokens) {
      detail::launch_kernel(quant_mmq_kernel<Format, Y, 1>,
                            dim3(ceil_div(rows, 32), token_tiles, z), dim3(kThreads), 0, stream, w,
                            w_row_bytes, rows, x, y, y_row_stride, per_part, partials);
    } else {
      detail::launch_kernel(quant_mmq_kernel<Format, Y, 2>,
                            dim3(ceil_div(rows, 64), token_tiles, z), dim3(kThreads), 0, stream, w,
                            w_row_bytes, rows, x, y, y_row_stride, per_part, partials);
    }
    if (partials) {
      const int64_t n = static_cast<int64_t>(x.num_tokens) * rows;
      const auto blocks =
          static_cast<unsigned int>(std::min<int64_t>((n + kAddThreads - 1) / kAddThreads, 4096));
      detail::launch_kernel(add_parts_kernel<Y>, dim3(blocks), dim3(kAddThreads), 0, stream,
                            partials, parts, x.num_tokens, rows, y, y_row_stride);
    }
    status = detail::launch_status();
  });
  return status;
}

template KernelStatus quant_mmq<float>(QuantFormat, const uint8_t*, size_t, int, const Q8Rows&,
                                       float*, int, cudaStream_t, MmqSplit);
template KernelStatus quant_mmq<__half>(QuantFormat, const uint8_t*, size_t, int, const Q8Rows&,
                                        __half*, int, cudaStream_t, MmqSplit);
template KernelStatus quant_mmq<__nv_bfloat16>(QuantFormat, const uint8_t*, size_t, int,
                                               const Q8Rows&, __nv_bfloat16*, int, cudaStream_t,
                                               MmqSplit);

}  // namespace sluice::kernels
