// Grid-stride element-wise kernels (sigmoid_gates.cuh).
#include "kernels/sigmoid_gates.cuh"

#include <cmath>

#include "kernels/dtype_traits.cuh"

namespace sluice::kernels {
namespace {

using detail::from_float;
using detail::global_thread_idx;
using detail::grid_stride;
using detail::to_float;

constexpr int kThreads = 256;

__device__ __forceinline__ float sigmoid_of(float x) {
  return 1.0f / (1.0f + expf(-x));
}

template <typename T>
__global__ void split_gated_q_kernel(const T* __restrict__ in, T* __restrict__ qkv,
                                     T* __restrict__ gate, int64_t n, int head_dim, int q_size,
                                     int tail) {
  const int64_t in_width = 2 * static_cast<int64_t>(q_size) + tail;
  for (int64_t e = global_thread_idx(); e < n; e += grid_stride()) {
    const int64_t token = e / in_width;
    const int64_t c = e % in_width;
    const T value = in[e];
    if (c >= 2 * static_cast<int64_t>(q_size)) {
      qkv[token * (q_size + tail) + q_size + (c - 2 * q_size)] = value;
      continue;
    }
    const int64_t head = c / (2 * head_dim);
    const int64_t i = c % (2 * head_dim);
    if (i < head_dim) {
      qkv[token * (q_size + tail) + head * head_dim + i] = value;
    } else {
      gate[token * q_size + head * head_dim + (i - head_dim)] = value;
    }
  }
}

template <typename T>
__global__ void sigmoid_gate_mul_kernel(T* x, const T* __restrict__ gate, int64_t n) {
  for (int64_t i = global_thread_idx(); i < n; i += grid_stride()) {
    x[i] = from_float<T>(to_float(x[i]) * sigmoid_of(to_float(gate[i])));
  }
}

template <typename T>
__global__ void add_sigmoid_scaled_rows_kernel(T* out, const float* __restrict__ logit,
                                               const float* __restrict__ x, int64_t n, int cols) {
  for (int64_t i = global_thread_idx(); i < n; i += grid_stride()) {
    out[i] = from_float<T>(to_float(out[i]) + sigmoid_of(logit[i / cols]) * x[i]);
  }
}

}  // namespace

template <typename T>
KernelStatus split_gated_q(const T* in, T* qkv, T* gate, int num_tokens, int num_heads,
                           int head_dim, int tail, cudaStream_t stream) {
  if (num_tokens < 0 || num_heads <= 0 || head_dim <= 0 || tail < 0 || in == qkv)
    return detail::invalid_argument();
  const int q_size = num_heads * head_dim;
  const int64_t n = static_cast<int64_t>(num_tokens) * (2 * q_size + tail);
  if (n == 0) return kKernelOk;
  detail::launch_kernel(split_gated_q_kernel<T>, detail::grid_stride_blocks(n, kThreads), kThreads,
                        0, stream, in, qkv, gate, n, head_dim, q_size, tail);
  return detail::launch_status();
}

template <typename T>
KernelStatus sigmoid_gate_mul(T* x, const T* gate, int64_t n, cudaStream_t stream) {
  if (n < 0) return detail::invalid_argument();
  if (n == 0) return kKernelOk;
  detail::launch_kernel(sigmoid_gate_mul_kernel<T>, detail::grid_stride_blocks(n, kThreads),
                        kThreads, 0, stream, x, gate, n);
  return detail::launch_status();
}

template <typename T>
KernelStatus add_sigmoid_scaled_rows(T* out, const float* logit, const float* x, int rows, int cols,
                                     cudaStream_t stream) {
  if (rows < 0 || cols <= 0) return detail::invalid_argument();
  const int64_t n = static_cast<int64_t>(rows) * cols;
  if (n == 0) return kKernelOk;
  detail::launch_kernel(add_sigmoid_scaled_rows_kernel<T>, detail::grid_stride_blocks(n, kThreads),
                        kThreads, 0, stream, out, logit, x, n, cols);
  return detail::launch_status();
}

#define SLUICE_INSTANTIATE_SIGMOID_GATES(T)                                                   \
  template KernelStatus split_gated_q<T>(const T*, T*, T*, int, int, int, int, cudaStream_t); \
  template KernelStatus sigmoid_gate_mul<T>(T*, const T*, int64_t, cudaStream_t);             \
  template KernelStatus add_sigmoid_scaled_rows<T>(T*, const float*, const float*, int, int,  \
                                                   cudaStream_t);
SLUICE_INSTANTIATE_SIGMOID_GATES(float)
SLUICE_INSTANTIATE_SIGMOID_GATES(__nv_bfloat16)
SLUICE_INSTANTIATE_SIGMOID_GATES(__half)
#undef SLUICE_INSTANTIATE_SIGMOID_GATES

}  // namespace sluice::kernels
