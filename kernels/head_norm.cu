// q/k head norms: one warp per head, over the Q heads and then the K heads of every token in a
// single grid (decode at batch 1 is launch-bound, so Q and K do not get a launch each). A lane
// sums the squares of every 32nd element of its head, a butterfly of shuffles gives the warp the
// head's total, and each lane then scales the elements it read. A head is at most a few hundred
// elements (head_dim 256 in Gemma 3): a warp has enough to do, and a block of kWarps heads keeps
// the grid small at batch 1 (Qwen3-8B: 40 heads, 10 blocks).
#include "kernels/head_norm.cuh"

#include "kernels/dtype_traits.cuh"

namespace sluice::kernels {
namespace {

using detail::from_float;
using detail::to_float;

constexpr int kWarps = 4;

// q: [num_tokens, num_heads * head_dim], rows q_stride apart
// k: [num_tokens, num_kv_heads * head_dim], rows kv_stride apart
// q_weight, k_weight: [head_dim]
template <typename T>
__global__ void head_rms_norm_kernel(T* q, T* k, const float* __restrict__ q_weight,
                                     const float* __restrict__ k_weight, float eps, int num_heads,
                                     int num_kv_heads, int head_dim, int64_t q_stride,
                                     int64_t kv_stride, int64_t num_all_heads) {
  // The whole warp takes the same head, so a warp past the end leaves before any shuffle.
  const int64_t head_idx = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (head_idx >= num_all_heads) return;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int heads_per_token = num_heads + num_kv_heads;
  const int64_t token = head_idx / heads_per_token;
  const int head = static_cast<int>(head_idx % heads_per_token);
  const bool is_q = head < num_heads;
  T* x = is_q ? q + token * q_stride + static_cast<int64_t>(head) * head_dim
              : k + token * kv_stride + static_cast<int64_t>(head - num_heads) * head_dim;
  const float* weight = is_q ? q_weight : k_weight;

  float sum_squares = 0.0f;
  for (int i = lane; i < head_dim; i += 32) {
    const float value = to_float(x[i]);
    sum_squares += value * value;
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    sum_squares += __shfl_xor_sync(0xffffffffu, sum_squares, offset);
  }
  const float scale = rsqrtf(sum_squares / static_cast<float>(head_dim) + eps);
  for (int i = lane; i < head_dim; i += 32) {
    x[i] = from_float<T>(to_float(x[i]) * scale * weight[i]);
  }
}

}  // namespace

template <typename T>
KernelStatus head_rms_norm(T* q, T* k, const float* q_weight, const float* k_weight, float eps,
                           int num_tokens, int num_heads, int num_kv_heads, int head_dim,
                           int64_t row_stride, cudaStream_t stream) {
  if (num_tokens < 0 || num_heads <= 0 || num_kv_heads <= 0 || head_dim <= 0)
    return detail::invalid_argument();
  const int64_t q_dim = static_cast<int64_t>(num_heads) * head_dim;
  const int64_t kv_dim = static_cast<int64_t>(num_kv_heads) * head_dim;
  // A fused row holds q, then k, then v: the stride covers all three.
  if (row_stride != 0 && row_stride < q_dim + 2 * kv_dim) return detail::invalid_argument();
  if (num_tokens == 0) return kKernelOk;
  const int64_t num_all_heads = static_cast<int64_t>(num_tokens) * (num_heads + num_kv_heads);
  const auto blocks = static_cast<unsigned int>((num_all_heads + kWarps - 1) / kWarps);
  detail::launch_kernel(head_rms_norm_kernel<T>, blocks, kWarps * 32, 0, stream, q, k, q_weight,
                        k_weight, eps, num_heads, num_kv_heads, head_dim,
                        row_stride != 0 ? row_stride : q_dim, row_stride != 0 ? row_stride : kv_dim,
                        num_all_heads);
  return detail::launch_status();
}

#define SLUICE_INSTANTIATE_HEAD_NORM(T)                                                            \
  template KernelStatus head_rms_norm<T>(T*, T*, const float*, const float*, float, int, int, int, \
                                         int, int64_t, cudaStream_t);
SLUICE_INSTANTIATE_HEAD_NORM(float)
SLUICE_INSTANTIATE_HEAD_NORM(__nv_bfloat16)
SLUICE_INSTANTIATE_HEAD_NORM(__half)
#undef SLUICE_INSTANTIATE_HEAD_NORM

}  // namespace sluice::kernels
