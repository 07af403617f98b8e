// Mixture-of-experts routing and combining kernels (moe.cuh).
#include "kernels/moe.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/dtype_traits.cuh"
#include "kernels/launch.cuh"

namespace sluice::kernels {
namespace {

using detail::from_float;
using detail::global_thread_idx;
using detail::grid_stride;
using detail::to_float;

constexpr int kThreads = 128;

// True when score a (of expert a) ranks before score b (of expert b): higher, ties to the lower id.
__device__ __forceinline__ bool ranks_before(float a, int ia, float b, int ib) {
  return a > b || (a == b && ia < ib);
}

// The k best of scores[0..n) by ranks_before into ids, best first (selection: n and k are small).
__device__ void select_top_k(const float* scores, int n, int k, int32_t* ids) {
  for (int j = 0; j < k; ++j) {
    int best = -1;
    for (int i = 0; i < n; ++i) {
      bool is_taken = false;
      for (int c = 0; c < j; ++c) is_taken = is_taken || ids[c] == i;
      if (!is_taken && (best < 0 || ranks_before(scores[i], i, scores[best], best))) best = i;
    }
    ids[j] = best;
  }
}

// In place: x[0..n) = softmax(x) as cpu_moe.cpp's softmax rounds it.
__device__ void softmax_in_place(float* x, int n) {
  float max_value = x[0];
  for (int i = 1; i < n; ++i) max_value = fmaxf(max_value, x[i]);
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    x[i] = expf(x[i] - max_value);
    sum += x[i];
  }
  const auto inverse = static_cast<float>(1.0 / sum);
  for (int i = 0; i < n; ++i) x[i] *= inverse;
}

__global__ void moe_choose_experts_kernel(float* router_logits, int32_t* ids, float* weights,
                                          int num_tokens, int num_experts, int top_k,
                                          MoeGatingKind gating, bool renormalize) {
  const int64_t t = global_thread_idx();
  if (t >= num_tokens) return;
  float* scores = router_logits + t * num_experts;
  int32_t* token_ids = ids + t * top_k;
  float* token_weights = weights + t * top_k;
  if (gating == MoeGatingKind::TopKSoftmax) {
    select_top_k(scores, num_experts, top_k, token_ids);
    for (int j = 0; j < top_k; ++j) token_weights[j] = scores[token_ids[j]];
    softmax_in_place(token_weights, top_k);
    return;
  }
  softmax_in_place(scores, num_experts);
  select_top_k(scores, num_experts, top_k, token_ids);
  float sum = 0.0f;
  for (int j = 0; j < top_k; ++j) {
    token_weights[j] = scores[token_ids[j]];
    sum += token_weights[j];
  }
  if (renormalize) {
    for (int j = 0; j < top_k; ++j) token_weights[j] /= sum;
  }
}

template <typename T>
__global__ void moe_combine_kernel(const float* __restrict__ expert_out,
                                   const int32_t* __restrict__ row_of_slot,
                                   const float* __restrict__ weights, T* __restrict__ out,
                                   int num_tokens, int top_k, int hidden) {
  const int64_t n = static_cast<int64_t>(num_tokens) * hidden;
  for (int64_t i = global_thread_idx(); i < n; i += grid_stride()) {
    const int64_t t = i / hidden;
    const int64_t c = i - t * hidden;
    float sum = 0.0f;
    for (int j = 0; j < top_k; ++j) {
      const int64_t slot = t * top_k + j;
      const float y = expert_out[static_cast<int64_t>(row_of_slot[slot]) * hidden + c];
      sum = j == 0 ? weights[slot] * y : sum + weights[slot] * y;
    }
    out[i] = from_float<T>(sum);
  }
}

// Grid: (blocks over dim, num_groups).
template <typename T>
__global__ void add_expert_biases_kernel(T* __restrict__ y, const float* const* __restrict__ biases,
                                         const ExpertRows* __restrict__ groups, int dim) {
  const ExpertRows g = groups[blockIdx.y];
  const float* bias = biases[g.expert];
  const int c = static_cast<int>(blockIdx.x) * kThreads + static_cast<int>(threadIdx.x);
  if (c >= dim) return;
  for (int r = g.first_row; r < g.first_row + g.num_rows; ++r) {
    T& v = y[static_cast<int64_t>(r) * dim + c];
    v = from_float<T>(to_float(v) + bias[c]);
  }
}

}  // namespace

template <typename T>
KernelStatus add_expert_biases(T* y, const float* const* biases, const ExpertRows* groups,
                               int num_groups, int dim, cudaStream_t stream) {
  if (num_groups < 0 || dim < 1) return detail::invalid_argument();
  if (num_groups == 0) return kKernelOk;
  detail::launch_kernel(add_expert_biases_kernel<T>,
                        dim3(static_cast<unsigned>((dim + kThreads - 1) / kThreads),
                             static_cast<unsigned>(num_groups)),
                        dim3(kThreads), 0, stream, y, biases, groups, dim);
  return detail::launch_status();
}

KernelStatus moe_choose_experts(float* router_logits, int32_t* ids, float* weights, int num_tokens,
                                int num_experts, int top_k, MoeGatingKind gating, bool renormalize,
                                cudaStream_t stream) {
  if (num_tokens < 0 || num_experts < 1 || num_experts > kMaxMoeExperts || top_k < 1 ||
      top_k > num_experts || top_k > kMaxMoeTopK)
    return detail::invalid_argument();
  if (num_tokens == 0) return kKernelOk;
  const auto blocks = static_cast<unsigned>((num_tokens + kThreads - 1) / kThreads);
  detail::launch_kernel(moe_choose_experts_kernel, blocks, kThreads, 0, stream, router_logits, ids,
                        weights, num_tokens, num_experts, top_k, gating, renormalize);
  return detail::launch_status();
}

template <typename T>
KernelStatus moe_combine(const float* expert_out, const int32_t* row_of_slot, const float* weights,
                         T* out, int num_tokens, int top_k, int hidden, cudaStream_t stream) {
  if (num_tokens < 0 || top_k < 1 || hidden < 1) return detail::invalid_argument();
  if (num_tokens == 0) return kKernelOk;
  const int64_t n = static_cast<int64_t>(num_tokens) * hidden;
  detail::launch_kernel(moe_combine_kernel<T>, detail::grid_stride_blocks(n, kThreads), kThreads, 0,
                        stream, expert_out, row_of_slot, weights, out, num_tokens, top_k, hidden);
  return detail::launch_status();
}

#define SLUICE_INSTANTIATE_MOE(T)                                                                  \
  template KernelStatus moe_combine<T>(const float*, const int32_t*, const float*, T*, int, int,   \
                                       int, cudaStream_t);                                         \
  template KernelStatus add_expert_biases<T>(T*, const float* const*, const ExpertRows*, int, int, \
                                             cudaStream_t);
SLUICE_INSTANTIATE_MOE(float)
SLUICE_INSTANTIATE_MOE(__nv_bfloat16)
SLUICE_INSTANTIATE_MOE(__half)
#undef SLUICE_INSTANTIATE_MOE

}  // namespace sluice::kernels
