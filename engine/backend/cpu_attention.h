// Paged attention on the CPU: each query token attends causally to its request's context,
// read through the request's block table. The CPU pool's layout per layer is
//   K: [num_blocks, num_kv_heads, head_dim, block_size]  (transposed within a block, so the
//      scores of a block's positions are one vector FMA per dimension, no horizontal sums)
//   V: [num_blocks, num_kv_heads, block_size, head_dim]
// so a block is one contiguous chunk per layer (copy-on-write copies it whole). The reference
// for the CUDA kernels, which choose their own layout.
#pragma once

#include <cstdint>

#include "engine/core/thread_pool.h"
#include "engine/runner/batch_inputs.h"

namespace sluice {

struct AttentionShape {
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int block_size = 0;
  float scale = 0.0f;          // multiplies q.k; 0 = 1 / sqrt(head_dim)
  float logit_softcap = 0.0f;  // 0 = off
  int sliding_window = 0;      // 0 = full causal
};

// Writes each token's K and V into its slot of the layer's pool.
// k, v: [num_tokens, num_kv_heads * head_dim]; k_cache, v_cache: one layer, layout above.
void write_kv_cache(const BatchInputs& inputs, const AttentionShape& shape, const float* k,
                    const float* v, float* k_cache, float* v_cache);

// out[t] = softmax(q[t] · K^T / sqrt(head_dim)) · V over positions 0..positions[t] of token t's
// request (grouped-query: query head h reads KV head h / (num_heads / num_kv_heads)).
// q, out: [num_tokens, num_heads * head_dim]. Each (token, KV head) is computed independently
// in a fixed order, so a request's result does not depend on the rest of the batch.
void paged_attention(const BatchInputs& inputs, const AttentionShape& shape, const float* q,
                     const float* k_cache, const float* v_cache, float* out, ThreadPool& pool);

}  // namespace sluice
