// RMSNorm of every head of q and of k, in place (Qwen3's and Gemma 3's q/k norms, before RoPE).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/status.h"

namespace sluice::kernels {

// q:          [num_tokens, num_heads * head_dim]     each head_dim-wide head normed in place
// k:          [num_tokens, num_kv_heads * head_dim]  the same
// row_stride: elements from one token's q (and k) row to the next; 0 for two dense arrays,
//             q_size + 2 * kv_size when they are the parts of one fused q|k|v row
// q_weight, k_weight: [head_dim] float, with any offset (Gemma's 1 + w) already applied
// head = head / sqrt(mean(head^2) + eps) * weight, in float, rounded to T once. Q and K heads are
// normed by one launch.
template <typename T>
KernelStatus head_rms_norm(T* q, T* k, const float* q_weight, const float* k_weight, float eps,
                           int num_tokens, int num_heads, int num_kv_heads, int head_dim,
                           int64_t row_stride, cudaStream_t stream);

}  // namespace sluice::kernels
