// Element-wise and row-wise ops of the CPU backend (the reference for the CUDA kernels).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/model/model_config.h"

namespace sluice {

// out[t] = x[t] / sqrt(mean(x[t]^2) + eps) * weight; x, out: [num_tokens, dim] (may alias).
void rms_norm(const float* x, const float* weight, float eps, int64_t num_tokens, int64_t dim,
              float* out);

// Rotates q [num_tokens, num_heads * head_dim] and k [num_tokens, num_kv_heads * head_dim] in
// place by each token's position, pairing dimensions per layout. inv_freq has one entry per
// rotated pair: fewer than head_dim / 2 rotate only the first 2 * inv_freq.size() dimensions of
// each head (partial rotary), the rest pass through.
void apply_rope(float* q, float* k, const int32_t* positions, int64_t num_tokens, int num_heads,
                int num_kv_heads, int head_dim, RopeLayout layout,
                const std::vector<double>& inv_freq, ThreadPool& pool);

// gate[i] = silu(gate[i]) * up[i] over n values.
void silu_mul(float* gate, const float* up, int64_t n);

// gate[i] = gelu_tanh(gate[i]) * up[i] over n values (GeGLU).
void gelu_tanh_mul(float* gate, const float* up, int64_t n);

// gate[i] = gpt-oss's clamped SwiGLU of gate[i] and up[i] (Activation::SwigluOai) over n values.
void swiglu_oai_mul(float* gate, const float* up, int64_t n);

// gate[i] = act(gate[i]) * up[i] (or the clamped form) for the model's activation.
void gated_activation(Activation activation, float* gate, const float* up, int64_t n);

// x[i] = cap * tanh(x[i] / cap) over n values.
void soft_cap(float* x, int64_t n, float cap);

// x[t] += bias for num_tokens rows of dim values.
void add_bias(float* x, const float* bias, int64_t num_tokens, int64_t dim);

}  // namespace sluice
