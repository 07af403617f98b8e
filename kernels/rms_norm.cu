// RMSNorm fused with the residual add. One block per token: the first sweep adds the residual,
// stores residual_out (rounded to T) and sums the squares of the stored values in float; a
// block reduction gives the token's scale; the second sweep re-reads residual_out (each thread
// only its own elements, so no barrier is needed for them) and writes out. The norm is taken of
// residual_out as stored, so out is exactly the norm of what the next layer reads back.
//
// Rows move in 16-byte packs when every matrix is 16-byte aligned and hidden_size is a multiple
// of the pack (4 floats, 8 halves), element by element otherwise. x, residual_in, residual_out
// and out may alias one another element for element: a thread reads an element before it writes
// it, and the same thread handles an index in both sweeps. A plain norm (no residual_out) stores
// no sum and its second sweep re-reads x.
#include "kernels/rms_norm.cuh"

#include "kernels/dtype_traits.cuh"

namespace sluice::kernels {
namespace {

using detail::from_float;
using detail::Pack;
using detail::to_float;

constexpr int kMaxThreads = 512;

// Returns the sum of value over the block (to every thread). Precondition: blockDim.x is a
// multiple of 32 and at most kMaxThreads.
__device__ float block_sum(float value) {
  __shared__ float warp_sums[kMaxThreads / 32];
  __shared__ float total;
  for (int offset = 16; offset > 0; offset >>= 1) {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  if (warp == 0) {
    const int num_warps = blockDim.x / 32;
    float sum = lane < num_warps ? warp_sums[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) {
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    }
    if (lane == 0) total = sum;
  }
  __syncthreads();
  return total;
}

// Adds the residual to n consecutive values and returns their sum of squares. residual_out is
// null for a plain norm of x (residual_in is then null too, and the sum is x itself).
template <typename T, int N>
__device__ __forceinline__ float add_residual(const T* x, const T* residual_in, T* residual_out) {
  float sum_squares = 0.0f;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    float value = to_float(x[j]);
    if (residual_in != nullptr) value += to_float(residual_in[j]);
    const T stored = from_float<T>(value);
    if (residual_out != nullptr) residual_out[j] = stored;
    const float rounded = to_float(stored);
    sum_squares += rounded * rounded;
  }
  return sum_squares;
}

// Pack p of the second sweep: in * scale * weight, stored to out and returned as stored.
template <typename T>
__device__ __forceinline__ detail::Pack<T> normalize_pack(const T* in, const float* weight,
                                                          float scale, int p, T* out) {
  using P = detail::Pack<T>;
  constexpr int kPack = P::kSize;
  const P in_pack = reinterpret_cast<const P*>(in)[p];
  P out_pack;
#pragma unroll
  for (int j = 0; j < kPack; ++j) {
    const float w = weight[p * kPack + j];
    out_pack.values[j] = from_float<T>(to_float(in_pack.values[j]) * scale * w);
  }
  reinterpret_cast<P*>(out)[p] = out_pack;
  return out_pack;
}

// Quantizes a pack of eight stored values (out as written) for the integer GEMV: four lanes
// (aligned, all in range or all out) hold one 32-value block and meet by shuffles, with the
// arithmetic of quantize_q8_rows. Every lane of the warp calls it.
template <typename T>
__device__ __forceinline__ void quantize_pack_q8(const float (&v)[8], bool active, int token, int p,
                                                 int hidden_size, const Q8Rows& q8) {
  float amax = 0.0f;
#pragma unroll
  for (int j = 0; j < 8; ++j) amax = fmaxf(amax, fabsf(v[j]));
  amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
  amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
  const float d = amax / 127.0f;
  const float inv = d > 0.0f ? 1.0f / d : 0.0f;
  uint32_t words[2] = {0u, 0u};
  int sum = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int q = static_cast<int>(rintf(v[j] * inv));
    sum += q;
    words[j / 4] |= (static_cast<uint32_t>(q) & 0xFFu) << (8 * (j % 4));
  }
  sum += __shfl_xor_sync(0xffffffffu, sum, 1);
  sum += __shfl_xor_sync(0xffffffffu, sum, 2);
  if (!active) return;
  int8_t* row = q8.qs + static_cast<int64_t>(token) * hidden_size;
  *reinterpret_cast<uint2*>(row + 8 * p) = uint2{words[0], words[1]};
  if (p % 4 == 0) {
    q8.scales[static_cast<int64_t>(token) * (hidden_size / 32) + p / 4] =
        Q8Scale{d, d * static_cast<float>(sum)};
  }
}

// x, residual_in, residual_out, out: [num_tokens, hidden_size] (one block per token)
// weight:                            [hidden_size]
// kQuantize: out is also quantized into q8 (packed rows of eight values, rms_norm_residual_q8).
template <typename T, bool kQuantize = false>
__global__ void rms_norm_residual_kernel(const T* x, const T* residual_in, T* residual_out,
                                         const float* __restrict__ weight, float eps, T* out,
                                         int hidden_size, bool is_packed, Q8Rows q8) {
  const int64_t row_offset = static_cast<int64_t>(blockIdx.x) * hidden_size;
  x += row_offset;
  out += row_offset;
  if (residual_in != nullptr) residual_in += row_offset;
  if (residual_out != nullptr) residual_out += row_offset;
  // What the second sweep normalises: the stored sum, or x itself for a plain norm.
  const T* normed_in = residual_out != nullptr ? residual_out : x;

  using P = Pack<T>;
  constexpr int kPack = P::kSize;
  float sum_squares = 0.0f;
  if (is_packed) {
    const int num_packs = hidden_size / kPack;
    for (int p = threadIdx.x; p < num_packs; p += blockDim.x) {
      const P x_pack = reinterpret_cast<const P*>(x)[p];
      P residual_pack;
      if (residual_in != nullptr) residual_pack = reinterpret_cast<const P*>(residual_in)[p];
      P sum_pack;
      sum_squares += add_residual<T, kPack>(
          x_pack.values, residual_in != nullptr ? residual_pack.values : nullptr, sum_pack.values);
      if (residual_out != nullptr) reinterpret_cast<P*>(residual_out)[p] = sum_pack;
    }
  } else {
    for (int i = threadIdx.x; i < hidden_size; i += blockDim.x) {
      sum_squares += add_residual<T, 1>(x + i, residual_in != nullptr ? residual_in + i : nullptr,
                                        residual_out != nullptr ? residual_out + i : nullptr);
    }
  }
  const float total = block_sum(sum_squares);
  const float scale = rsqrtf(total / static_cast<float>(hidden_size) + eps);

  if constexpr (kQuantize) {
    // Every thread takes the same number of turns, so that the shuffles find the whole warp.
    static_assert(kPack == 8, "the quantized norm packs eight values");
    const int num_packs = hidden_size / kPack;
    for (int base = 0; base < num_packs; base += static_cast<int>(blockDim.x)) {
      const int p = base + static_cast<int>(threadIdx.x);
      const bool active = p < num_packs;
      float stored[kPack] = {};
      if (active) {
        const P out_pack = normalize_pack(normed_in, weight, scale, p, out);
#pragma unroll
        for (int j = 0; j < kPack; ++j) stored[j] = to_float(out_pack.values[j]);
      }
      quantize_pack_q8<T>(stored, active, static_cast<int>(blockIdx.x), p, hidden_size, q8);
    }
  } else if (is_packed) {
    const int num_packs = hidden_size / kPack;
    for (int p = threadIdx.x; p < num_packs; p += blockDim.x)
      normalize_pack(normed_in, weight, scale, p, out);
  } else {
    for (int i = threadIdx.x; i < hidden_size; i += blockDim.x) {
      out[i] = from_float<T>(to_float(normed_in[i]) * scale * weight[i]);
    }
  }
}

}  // namespace

template <typename T>
KernelStatus rms_norm_residual(const T* x, const T* residual_in, T* residual_out,
                               const float* weight, float eps, T* out, int num_tokens,
                               int hidden_size, cudaStream_t stream) {
  if (num_tokens < 0 || hidden_size <= 0 || (residual_out == nullptr && residual_in != nullptr))
    return detail::invalid_argument();
  if (num_tokens == 0) return kKernelOk;
  const bool is_packed = detail::is_aligned_16(x) && detail::is_aligned_16(residual_out) &&
                         detail::is_aligned_16(out) &&
                         (residual_in == nullptr || detail::is_aligned_16(residual_in)) &&
                         hidden_size % Pack<T>::kSize == 0;
  // About two packs per thread: 256 threads for a 4096-wide bf16 row, 512 for fp32.
  const int units = is_packed ? hidden_size / Pack<T>::kSize : hidden_size;
  const int wanted = 32 * ((units / 2 + 31) / 32);
  const int threads = wanted < 32 ? 32 : (wanted > kMaxThreads ? kMaxThreads : wanted);
  detail::launch_kernel(rms_norm_residual_kernel<T>, num_tokens, threads, 0, stream, x, residual_in,
                        residual_out, weight, eps, out, hidden_size, is_packed, Q8Rows{});
  return detail::launch_status();
}

template <typename T>
KernelStatus rms_norm_residual_q8(const T* x, const T* residual_in, T* residual_out,
                                  const float* weight, float eps, T* out, const Q8Rows& q8,
                                  int num_tokens, int hidden_size, cudaStream_t stream) {
  if (num_tokens < 0 || hidden_size <= 0 || hidden_size % 32 != 0 ||
      (residual_out == nullptr && residual_in != nullptr) || q8.num_tokens != num_tokens ||
      q8.cols != hidden_size)
    return detail::invalid_argument();
  const bool is_packed = detail::is_aligned_16(x) && detail::is_aligned_16(residual_out) &&
                         detail::is_aligned_16(out) &&
                         (residual_in == nullptr || detail::is_aligned_16(residual_in));
  if (!is_packed) return detail::invalid_argument();
  if (num_tokens == 0) return kKernelOk;
  const int units = hidden_size / Pack<T>::kSize;
  const int wanted = 32 * ((units / 2 + 31) / 32);
  const int threads = wanted < 32 ? 32 : (wanted > kMaxThreads ? kMaxThreads : wanted);
  detail::launch_kernel(rms_norm_residual_kernel<T, true>, num_tokens, threads, 0, stream, x,
                        residual_in, residual_out, weight, eps, out, hidden_size, true, q8);
  return detail::launch_status();
}

template KernelStatus rms_norm_residual_q8<__nv_bfloat16>(const __nv_bfloat16*,
                                                          const __nv_bfloat16*, __nv_bfloat16*,
                                                          const float*, float, __nv_bfloat16*,
                                                          const Q8Rows&, int, int, cudaStream_t);
template KernelStatus rms_norm_residual_q8<__half>(const __half*, const __half*, __half*,
                                                   const float*, float, __half*, const Q8Rows&, int,
                                                   int, cudaStream_t);

#define SLUICE_INSTANTIATE_RMS_NORM(T)                                                             \
  template KernelStatus rms_norm_residual<T>(const T*, const T*, T*, const float*, float, T*, int, \
                                             int, cudaStream_t);
SLUICE_INSTANTIATE_RMS_NORM(float)
SLUICE_INSTANTIATE_RMS_NORM(__nv_bfloat16)
SLUICE_INSTANTIATE_RMS_NORM(__half)
#undef SLUICE_INSTANTIATE_RMS_NORM

}  // namespace sluice::kernels
