// Paged attention on the CPU: each query token attends causally to its request's context (or
// to the window of its most recent positions), read through the request's block table. The CPU
// pool's layout per layer is
//   K: [num_blocks, num_kv_heads, head_dim, block_size]  (transposed within a block, so the
//      scores of a block's positions are one vector FMA per dimension, no horizontal sums)
//   V: [num_blocks, num_kv_heads, block_size, head_dim]
// so a block is one contiguous chunk per layer (copy-on-write copies it whole). The reference
// for the CUDA kernels, which choose their own layout.
#pragma once

#include <cstdint>

#include "engine/backend/batch_inputs.h"
#include "engine/core/thread_pool.h"
#include "engine/model/forward_pass.h"

namespace sluice {

struct AttentionShape {
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int block_size = 0;
};

// One layer's attention options: AttentionOptions (engine/model/forward_pass.h).

// Returns the options of a plain causal layer: scale 1 / sqrt(head_dim), no soft-cap, no window.
AttentionOptions causal_attention_options(int head_dim);

// Rounds each of num_rows rows of row_size values to what an FP8 E4M3 cache row holds: codes of
// the row's scale (engine/core/fp8_e4m3.h), decoded and scaled back, in place.
void round_rows_to_fp8(float* rows, int64_t num_rows, int row_size);

// Writes each token's K and V into its slot of the layer's pool.
// k, v: [num_tokens, num_kv_heads * head_dim]; k_cache, v_cache: one layer, layout above.
void write_kv_cache(const BatchInputs& inputs, const AttentionShape& shape, const float* k,
                    const float* v, float* k_cache, float* v_cache);

// out[t] = softmax(capped(scale * q[t] · K^T)) · V over the positions token t sees (above) of
// its request (grouped-query: query head h reads KV head h / (num_heads / num_kv_heads)).
// Blocks wholly outside a token's window are never read, so their table entries may be
// kNoBlock (-1): a window costs O(window) per query however long the context.
// q, out: [num_tokens, num_heads * head_dim]. Each (token, KV head) is computed independently
// in a fixed order, so a request's result does not depend on the rest of the batch.
// sinks: nullptr, or [num_heads] logits that join each head's softmax without a value
// (AttentionOptions::sinks).
// Throws sluice::Error for options out of range or a block inside a window that is kNoBlock.
void paged_attention(const BatchInputs& inputs, const AttentionShape& shape,
                     const AttentionOptions& options, const float* q, const float* k_cache,
                     const float* v_cache, float* out, ThreadPool& pool,
                     const float* sinks = nullptr);

}  // namespace sluice
