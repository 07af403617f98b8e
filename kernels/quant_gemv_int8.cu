// The integer GEMV of quant_gemv_int8.cuh: each 32-value block of a weight row unpacked by its
// format (quant_int8_formats.cuh) and multiplied with the tokens' quantized activations four
// values at a time (__dp4a).
#include "kernels/quant_gemv_int8.cuh"

#include <type_traits>

#include "kernels/dtype_traits.cuh"
#include "kernels/launch.cuh"
#include "kernels/q8_quantize.cuh"
#include "kernels/quant_formats.cuh"
#include "kernels/quant_int8_formats.cuh"

namespace sluice::kernels {
namespace {

using detail::from_float;
using detail::to_float;
using namespace int8_formats;  // NOLINT: the formats of this kernel's products

// ---- the activations ----------------------------------------------------------------------------

constexpr int kQuantizeThreads = 128;

// Eight lanes per 32 values of one token, four values each (q8_quantize.cuh). Every lane stays
// to the shuffles (lanes past the last block hold zeros and write nothing).
template <typename T>
__global__ void quantize_q8_kernel(const T* __restrict__ x, int x_row_stride, Q8Rows out) {
  const int blocks_per_row = out.cols / 32;
  const int thread =
      static_cast<int>(blockIdx.x) * kQuantizeThreads + static_cast<int>(threadIdx.x);
  const int i = thread / 8, part = thread % 8;
  const bool active = i < out.num_tokens * blocks_per_row;
  const int t = active ? i / blocks_per_row : 0, b = active ? i % blocks_per_row : 0;
  float v[4] = {};
  if (active) {
    const T* src = x + static_cast<int64_t>(t) * x_row_stride + 32 * b + 4 * part;
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = to_float(src[j]);
  }
  detail::quantize_q8_quad(
      v, active, part,
      reinterpret_cast<uint32_t*>(out.qs + static_cast<int64_t>(t) * out.cols + 32 * b),
      out.scales + (active ? i : 0));
}

// ---- the GEMV -----------------------------------------------------------------------------------

constexpr int kThreads = 128;  // a thread block: four warps
constexpr int kTokens = 8;     // tokens per pass over a row at most

// acc[r][t] += block b of row r (unpacked in u[r]) times block b of token t0 + t, for t < n: each
// token's activations are loaded once for the kR rows.
template <int NT, int kR>
__device__ __forceinline__ void dot_blocks(const Unpacked (&u)[kR], const Q8Rows& x, int t0, int n,
                                           int b, float (&acc)[kR][NT]) {
  const int num_blocks = x.cols / 32;
#pragma unroll
  for (int t = 0; t < NT; ++t) {
    if (t < n) {
      const int8_t* xq = x.qs + static_cast<int64_t>(t0 + t) * x.cols + 32 * b;
      const uint4 a = *reinterpret_cast<const uint4*>(xq);
      const uint4 c = *reinterpret_cast<const uint4*>(xq + 16);
      const Q8Scale s = x.scales[static_cast<int64_t>(t0 + t) * num_blocks + b];
#pragma unroll
      for (int r = 0; r < kR; ++r) {
        int lo = __dp4a(u[r].q[0], static_cast<int>(a.x), 0);
        lo = __dp4a(u[r].q[1], static_cast<int>(a.y), lo);
        lo = __dp4a(u[r].q[2], static_cast<int>(a.z), lo);
        lo = __dp4a(u[r].q[3], static_cast<int>(a.w), lo);
        int hi = __dp4a(u[r].q[4], static_cast<int>(c.x), 0);
        hi = __dp4a(u[r].q[5], static_cast<int>(c.y), hi);
        hi = __dp4a(u[r].q[6], static_cast<int>(c.z), hi);
        hi = __dp4a(u[r].q[7], static_cast<int>(c.w), hi);
        // Spelled as fmas: a compiler left to contract it may do so differently in each
        // instantiation (NT), and a token's products must not depend on its pass.
        const float sums =
            fmaf(u[r].d_hi, static_cast<float>(hi), u[r].d_lo * static_cast<float>(lo));
        acc[r][t] = fmaf(u[r].m, s.d_sum, fmaf(s.d, sums, acc[r][t]));
      }
    }
  }
}

// The outputs of weight rows [first_row, first_row + num_rows) (num_rows <= kR) for tokens
// [t0, t0 + n) (n <= NT) into y[t, row], by the kS warps of a row team (part: the warp's index
// in it; kS > 1 takes one row). Lane l of part p takes the rows' 32-value blocks 32 (p + kS i) + l:
// a warp's loads of one step cover 32 consecutive blocks of each row. Each lane unpacks kU of its
// blocks of each row before it multiplies any (loads in flight); the blocks are summed in the same
// order whatever kU and kR are. The team's partial sums meet in `team` (shared, kS * NT floats;
// unused when kS is 1). Every warp of the team calls it.
template <typename Format, int NT, int kU, int kS, int kR, typename Y>
__device__ __forceinline__ void gemv_int8_rows(const uint8_t* __restrict__ w, size_t row_bytes,
                                               int first_row, int num_rows, const Q8Rows& x, int t0,
                                               int n, Y* __restrict__ y, int y_row_stride, int part,
                                               int lane, float* team) {
  static_assert(kR == 1 || kS == 1, "a row team takes one row");
  const int num_blocks = x.cols / 32;
  constexpr int kStride = 32 * kS;
  const uint8_t* w_rows[kR];
#pragma unroll
  for (int r = 0; r < kR; ++r)
    w_rows[r] = w + static_cast<size_t>(first_row + min(r, num_rows - 1)) * row_bytes;
  float acc[kR][NT] = {};
  const auto unpack = [&](int block, Unpacked(&u)[kR]) {
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      Format::unpack(w_rows[r] + static_cast<size_t>(block / Format::kBlocks) * Format::kBytes,
                     block % Format::kBlocks, u[r]);
    }
  };
  int b = 32 * part + lane;
  for (; b + kStride * (kU - 1) < num_blocks; b += kStride * kU) {
    Unpacked u[kU][kR];
#pragma unroll
    for (int i = 0; i < kU; ++i) unpack(b + kStride * i, u[i]);
#pragma unroll
    for (int i = 0; i < kU; ++i) dot_blocks<NT, kR>(u[i], x, t0, n, b + kStride * i, acc);
  }
  if constexpr (kU > 1) {
    for (; b < num_blocks; b += kStride) {
      Unpacked u[kR];
      unpack(b, u);
      dot_blocks<NT, kR>(u, x, t0, n, b, acc);
    }
  }
#pragma unroll
  for (int r = 0; r < kR; ++r) {
#pragma unroll
    for (int t = 0; t < NT; ++t) {
      float s = acc[r][t];
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
      acc[r][t] = s;
    }
  }
  if constexpr (kS > 1) {
    if (lane == 0) {
#pragma unroll
      for (int t = 0; t < NT; ++t) team[part * NT + t] = acc[0][t];
    }
    __syncthreads();
    if (part == 0 && lane == 0) {
#pragma unroll
      for (int t = 0; t < NT; ++t) {
        float s = team[t];
#pragma unroll
        for (int p = 1; p < kS; ++p) s += team[p * NT + t];
        acc[0][t] = s;
      }
    }
  }
  if (part == 0 && lane == 0) {
#pragma unroll
    for (int r = 0; r < kR; ++r) {
#pragma unroll
      for (int t = 0; t < NT; ++t) {
        if (r < num_rows && t < n)
          y[static_cast<int64_t>(t0 + t) * y_row_stride + first_row + r] = from_float<Y>(acc[r][t]);
      }
    }
  }
}

// Grid: (ceil(rows / (4 kR / kS)), ceil(num_tokens / NT)); 4 warps a block, kS a row team, kR
// rows a team.
template <typename Format, typename Y, int NT, int kU, int kS, int kR>
__global__ void __launch_bounds__(kThreads)
    gemv_int8_kernel(const uint8_t* __restrict__ w, size_t row_bytes, int rows, Q8Rows x,
                     Y* __restrict__ y, int y_row_stride) {
  constexpr int kTeams = kThreads / 32 / kS;
  __shared__ float team[kTeams][kS > 1 ? kS * NT : 1];
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int slot = warp / kS, part = warp % kS;
  const int first_row = (static_cast<int>(blockIdx.x) * kTeams + slot) * kR;
  // A team's warps all stay (the barrier); rows past the end read row 0 and write nothing.
  const bool in_range = first_row < rows;
  if (kS == 1 && !in_range) return;
  const int t0 = static_cast<int>(blockIdx.y) * NT;
  gemv_int8_rows<Format, NT, kU, kS, kR>(
      w, row_bytes, in_range ? first_row : 0, in_range ? min(kR, rows - first_row) : 1, x, t0,
      in_range ? min(NT, x.num_tokens - t0) : 0, y, y_row_stride, part, lane, team[slot]);
}

// Grid: (ceil(rows / 4), num_groups): group g's rows through its expert's matrix, kTokens at a
// time (the one-row-per-warp GEMV above, kU 1: the same sums as quant_gemv_int8's default).
template <typename Format, typename Y>
__global__ void gemv_int8_experts_kernel(const uint8_t* const* __restrict__ w, size_t row_bytes,
                                         int rows, Q8Rows x, const ExpertRows* __restrict__ groups,
                                         Y* __restrict__ y, int y_row_stride) {
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int row = static_cast<int>(blockIdx.x) * (kThreads / 32) + warp;
  if (row >= rows) return;  // the whole warp
  const ExpertRows g = groups[blockIdx.y];
  for (int t0 = g.first_row; t0 < g.first_row + g.num_rows; t0 += kTokens) {
    gemv_int8_rows<Format, kTokens, 1, 1, 1>(w[g.expert], row_bytes, row, 1, x, t0,
                                             min(kTokens, g.first_row + g.num_rows - t0), y,
                                             y_row_stride, 0, lane, nullptr);
  }
}

unsigned int ceil_div(int a, int b) {
  return static_cast<unsigned int>((a + b - 1) / b);
}

size_t scales_offset(int num_tokens, int cols) {
  return (static_cast<size_t>(num_tokens) * cols + 15) / 16 * 16;
}

}  // namespace

size_t q8_rows_bytes(int num_tokens, int cols) {
  return scales_offset(num_tokens, cols) +
         static_cast<size_t>(num_tokens) * (cols / 32) * sizeof(Q8Scale);
}

Q8Rows q8_rows_in(void* buffer, int num_tokens, int cols) {
  auto* bytes = static_cast<uint8_t*>(buffer);
  return Q8Rows{reinterpret_cast<int8_t*>(bytes),
                reinterpret_cast<Q8Scale*>(bytes + scales_offset(num_tokens, cols)), num_tokens,
                cols};
}

template <typename T>
KernelStatus quantize_q8_rows(const T* x, int x_row_stride, const Q8Rows& out,
                              cudaStream_t stream) {
  if (out.cols % 32 != 0 || out.num_tokens < 0 || x_row_stride < out.cols)
    return detail::invalid_argument();
  const int count = out.num_tokens * (out.cols / 32);
  if (count == 0) return kKernelOk;
  detail::launch_kernel(quantize_q8_kernel<T>, dim3(ceil_div(8 * count, kQuantizeThreads)),
                        dim3(kQuantizeThreads), 0, stream, x, x_row_stride, out);
  return detail::launch_status();
}

bool has_int8_gemv(QuantFormat format) {
  return visit_int8_format(format, [](auto) {});
}

namespace {

// The ways quant_gemv_int8_variant has beyond the default: the formats of an 8B Q4_K_M or Q8_0
// file, bf16 activations (what a benchmark compares; every variant is a kernel to compile).
template <typename Format, typename Y>
constexpr bool kHasVariants = std::is_same_v<Y, __nv_bfloat16> &&
                              (std::is_same_v<Format, Q4_K> || std::is_same_v<Format, Q6_K> ||
                               std::is_same_v<Format, Q8_0>);

template <typename Format, typename Y, int NT, int kU, int kS, int kR>
void launch_gemv(const uint8_t* w, size_t w_row_bytes, int rows, const Q8Rows& x, Y* y,
                 int y_row_stride, cudaStream_t stream) {
  detail::launch_kernel(gemv_int8_kernel<Format, Y, NT, kU, kS, kR>,
                        dim3(ceil_div(rows, kThreads / 32 / kS * kR), ceil_div(x.num_tokens, NT)),
                        dim3(kThreads), 0, stream, w, w_row_bytes, rows, x, y, y_row_stride);
}

// Launches the variant's kernel; false when it has none for these types.
template <typename Format, typename Y, int NT>
bool launch_variant(QuantGemvVariant v, const uint8_t* w, size_t w_row_bytes, int rows,
                    const Q8Rows& x, Y* y, int y_row_stride, cudaStream_t stream) {
  constexpr QuantGemvVariant d = kDefaultQuantGemvVariant;
  if (v.unroll == d.unroll && v.split == d.split && v.rows == d.rows) {
    launch_gemv<Format, Y, NT, d.unroll, d.split, d.rows>(w, w_row_bytes, rows, x, y, y_row_stride,
                                                          stream);
    return true;
  }
  if constexpr (kHasVariants<Format, Y>) {
    const auto go = [&]<int kU, int kS, int kR>() {
      if (v.unroll != kU || v.split != kS || v.rows != kR) return false;
      launch_gemv<Format, Y, NT, kU, kS, kR>(w, w_row_bytes, rows, x, y, y_row_stride, stream);
      return true;
    };
    return go.template operator()<1, 1, 1>() || go.template operator()<2, 1, 1>() ||
           go.template operator()<4, 1, 1>() || go.template operator()<1, 2, 1>() ||
           go.template operator()<2, 2, 1>() || go.template operator()<1, 4, 1>() ||
           go.template operator()<1, 1, 2>() || go.template operator()<2, 1, 2>();
  }
  return false;
}

}  // namespace

template <typename Y>
KernelStatus quant_gemv_int8_variant(QuantFormat format, const uint8_t* w, size_t w_row_bytes,
                                     int rows, const Q8Rows& x, Y* y, int y_row_stride,
                                     QuantGemvVariant variant, cudaStream_t stream) {
  if (rows < 0 || x.num_tokens < 0 || x.num_tokens > kQuantInt8GemvMaxTokens || x.cols % 32 != 0)
    return detail::invalid_argument();
  if (y_row_stride == 0) y_row_stride = rows;
  if (y_row_stride < rows) return detail::invalid_argument();
  KernelStatus status = detail::invalid_argument();
  visit_int8_format(format, [&]<typename Format>(Format) {
    if (!is_whole_blocks<Format>(x.cols, w_row_bytes)) return;
    if (rows == 0 || x.num_tokens == 0) {
      status = kKernelOk;
      return;
    }
    // One token (decode at batch 1) passes alone; more go kTokens at a time.
    const bool launched = x.num_tokens == 1
                              ? launch_variant<Format, Y, 1>(variant, w, w_row_bytes, rows, x, y,
                                                             y_row_stride, stream)
                              : launch_variant<Format, Y, kTokens>(variant, w, w_row_bytes, rows, x,
                                                                   y, y_row_stride, stream);
    if (launched) status = detail::launch_status();
  });
  return status;
}

template <typename Y>
KernelStatus quant_gemv_int8(QuantFormat format, const uint8_t* w, size_t w_row_bytes, int rows,
                             const Q8Rows& x, Y* y, int y_row_stride, cudaStream_t stream) {
  return quant_gemv_int8_variant<Y>(format, w, w_row_bytes, rows, x, y, y_row_stride,
                                    kDefaultQuantGemvVariant, stream);
}

template <typename Y>
KernelStatus quant_gemv_int8_experts(QuantFormat format, const uint8_t* const* w,
                                     size_t w_row_bytes, int rows, const Q8Rows& x,
                                     const ExpertRows* groups, int num_groups, Y* y,
                                     int y_row_stride, cudaStream_t stream) {
  if (rows < 0 || num_groups < 0 || x.cols % 32 != 0 || y_row_stride < rows)
    return detail::invalid_argument();
  KernelStatus status = detail::invalid_argument();
  visit_int8_format(format, [&]<typename Format>(Format) {
    if (!is_whole_blocks<Format>(x.cols, w_row_bytes)) return;
    if (rows == 0 || num_groups == 0) {
      status = kKernelOk;
      return;
    }
    detail::launch_kernel(
        gemv_int8_experts_kernel<Format, Y>,
        dim3(ceil_div(rows, kThreads / 32), static_cast<unsigned int>(num_groups)), dim3(kThreads),
        0, stream, w, w_row_bytes, rows, x, groups, y, y_row_stride);
    status = detail::launch_status();
  });
  return status;
}

template KernelStatus quantize_q8_rows<float>(const float*, int, const Q8Rows&, cudaStream_t);
template KernelStatus quantize_q8_rows<__half>(const __half*, int, const Q8Rows&, cudaStream_t);
template KernelStatus quantize_q8_rows<__nv_bfloat16>(const __nv_bfloat16*, int, const Q8Rows&,
                                                      cudaStream_t);
template KernelStatus quant_gemv_int8<float>(QuantFormat, const uint8_t*, size_t, int,
                                             const Q8Rows&, float*, int, cudaStream_t);
template KernelStatus quant_gemv_int8<__half>(QuantFormat, const uint8_t*, size_t, int,
                                              const Q8Rows&, __half*, int, cudaStream_t);
template KernelStatus quant_gemv_int8<__nv_bfloat16>(QuantFormat, const uint8_t*, size_t, int,
                                                     const Q8Rows&, __nv_bfloat16*, int,
                                                     cudaStream_t);
template KernelStatus quant_gemv_int8_variant<float>(QuantFormat, const uint8_t*, size_t, int,
                                                     const Q8Rows&, float*, int, QuantGemvVariant,
                                                     cudaStream_t);
template KernelStatus quant_gemv_int8_variant<__half>(QuantFormat, const uint8_t*, size_t, int,
                                                      const Q8Rows&, __half*, int, QuantGemvVariant,
                                                      cudaStream_t);
template KernelStatus quant_gemv_int8_variant<__nv_bfloat16>(QuantFormat, const uint8_t*, size_t,
                                                             int, const Q8Rows&, __nv_bfloat16*,
                                                             int, QuantGemvVariant, cudaStream_t);
template KernelStatus quant_gemv_int8_experts<float>(QuantFormat, const uint8_t* const*, size_t,
                                                     int, const Q8Rows&, const ExpertRows*, int,
                                                     float*, int, cudaStream_t);
template KernelStatus quant_gemv_int8_experts<__half>(QuantFormat, const uint8_t* const*, size_t,
                                                      int, const Q8Rows&, const ExpertRows*, int,
                                                      __half*, int, cudaStream_t);
template KernelStatus quant_gemv_int8_experts<__nv_bfloat16>(QuantFormat, const uint8_t* const*,
                                                             size_t, int, const Q8Rows&,
                                                             const ExpertRows*, int, __nv_bfloat16*,
                                                             int, cudaStream_t);

}  // namespace sluice::kernels
