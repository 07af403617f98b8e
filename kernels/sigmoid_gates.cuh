// The sigmoid gates of Qwen3.5's layers: the gated attention's q projection split into q and its
// output gate, the attention output multiplied by sigmoid(gate), and the shared expert's output
// added to the routed experts' scaled by sigmoid(its router logit).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/status.h"

namespace sluice::kernels {

// in: [num_tokens, num_heads * 2 * head_dim (per head q | gate) | tail] rows of
// 2 * num_heads * head_dim + tail elements; writes qkv: [num_tokens, q | tail] (q the heads' q
// halves, q_size = num_heads * head_dim) and gate: [num_tokens, q_size] (the gate halves).
template <typename T>
KernelStatus split_gated_q(const T* in, T* qkv, T* gate, int num_tokens, int num_heads,
                           int head_dim, int tail, cudaStream_t stream);

// x[i] = x[i] * sigmoid(gate[i]) over n elements, in float, rounded to T once.
template <typename T>
KernelStatus sigmoid_gate_mul(T* x, const T* gate, int64_t n, cudaStream_t stream);

// out[t, c] += sigmoid(logit[t]) * x[t, c] for rows x cols (out in T, logit and x fp32, dense),
// in float, rounded to T once.
template <typename T>
KernelStatus add_sigmoid_scaled_rows(T* out, const float* logit, const float* x, int rows, int cols,
                                     cudaStream_t stream);

}  // namespace sluice::kernels
