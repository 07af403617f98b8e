// The Gated DeltaNet layer of a hybrid model (Qwen3.5; DeltaNetConfig in
// engine/model/model_config.h) between its input products and its output product, in three
// launches over fp32 rows:
// - deltanet_conv: the causal depthwise convolution of every q|k|v channel over the request's
//   conv state and this step's rows, then SiLU, in place; the conv state becomes the last
//   kernel - 1 rows before the convolution;
// - gated_delta_rule: per value head, q and k L2-normalised per key head (x / max(||x||, eps)),
//   q scaled by 1 / sqrt(dk), beta = sigmoid(b), g = a * softplus(alpha + dt), and token by token
//   S *= exp(g); S += k (beta (v - S^T k))^T; o = S^T q, S the request's [dk, dv] state;
// - gated_rms_norm: RMSNorm(o) * w * SiLU(z) per value head, rounded to T once.
// A request's state lives in its slot of a pool of fp32 slots (slot_stride floats apart); a
// DeltaNet layer's part of a slot is its conv state [kernel - 1, conv_dim] at conv_offset and its
// recurrent state [num_v_heads, dk, dv] at recurrent_offset. A request whose step starts at
// position 0 (seq_lens[r] == its token count) starts from zeros; a request with slot -1 (a padded
// decode row) starts from zeros and keeps nothing.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/status.h"

namespace sluice::kernels {

// The widest convolution deltanet_conv runs (Qwen3.5: 4 taps).
inline constexpr int kMaxDeltaNetConvKernel = 8;

// The requests of a step and their state slots (device arrays, BatchInputs' fields).
struct DeltaNetRequests {
  const int32_t* query_start_loc = nullptr;  // [num_requests + 1]
  const int32_t* seq_lens = nullptr;         // [num_requests]
  const int32_t* state_slots = nullptr;      // [num_requests]; -1: no slot
  int num_requests = 0;
  float* states = nullptr;  // the slot pool
  int64_t slot_stride = 0;  // floats from one slot to the next
};

// x: [num_tokens, conv_dim] rows x_stride floats apart, convolved and SiLU'd in place.
// taps: [conv_dim, kernel] oldest tap first. conv_offset: the layer's conv state in a slot.
KernelStatus deltanet_conv(float* x, int64_t x_stride, const float* taps, int conv_dim, int kernel,
                           const DeltaNetRequests& requests, int64_t conv_offset,
                           cudaStream_t stream);

struct DeltaRuleShape {
  int num_k_heads = 0;
  int num_v_heads = 0;
  int k_head_dim = 0;            // dk
  int v_head_dim = 0;            // dv
  bool grouped_v_heads = false;  // value head m reads key head m / (nv / nk); else m % nk
  float eps = 1e-6f;             // of the L2 norms
};

// qkv: [num_tokens, q (nk dk) | k (nk dk) | v (nv dv)] rows qkv_stride floats apart (the
// convolution's output); b, alpha: [num_tokens, nv] rows gate_stride apart (the raw products);
// a, dt: [nv]; out: [num_tokens, nv dv] dense. recurrent_offset: the layer's recurrent state in a
// slot.
KernelStatus gated_delta_rule(const float* qkv, int64_t qkv_stride, const float* b,
                              const float* alpha, int64_t gate_stride, const float* a,
                              const float* dt, float* out, const DeltaRuleShape& shape,
                              const DeltaNetRequests& requests, int64_t recurrent_offset,
                              cudaStream_t stream);

// out[t, h dv + j] = o[t, h dv + j] / sqrt(mean_j(o[t, h dv + j]^2) + eps) * weight[j] *
// silu(z[t, h dv + j]); o dense [num_tokens, num_heads dv], z rows z_stride apart, out dense.
template <typename T>
KernelStatus gated_rms_norm(const float* o, const float* z, int64_t z_stride, const float* weight,
                            float eps, T* out, int num_tokens, int num_heads, int head_dim,
                            cudaStream_t stream);

}  // namespace sluice::kernels
