// Attention over the paged KV cache for a flat batch of prefill chunks and decode tokens.
// Query token t of request r (positions[t]) attends causally to positions 0..positions[t] of
// r's context (with a sliding window w, to positions[t] - w + 1..positions[t] only), read
// through r's block table; blocks wholly outside a token's window are never read, so their
// table entries may be -1. Grouped-query: query head h reads KV head
// h / (num_heads / num_kv_heads), and a KV head's blocks are read once for all its query heads.
// Decode-heavy batches use a split-KV pass with a merge step for long contexts; prefill chunks
// use a tiled, FlashAttention-style pass (correct for chunked prefill and prefix-cache hits,
// where a request's first query position is past 0).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/kv_cache_fp8.cuh"
#include "kernels/status.h"

namespace sluice::kernels {

struct PagedAttentionParams {
  int num_tokens = 0;  // query tokens in the batch
  int num_requests = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;  // a multiple of 8 up to 256 (64, 80, 96, 128, 256 have tuned paths)
  int block_size = 0;
  int max_blocks_per_request = 0;  // row stride of block_tables
  int max_query_len = 0;           // longest query chunk of a request in this batch
  int min_query_len = 0;           // shortest one (0: unknown); above 1, no request decodes
  int max_seq_len = 0;             // longest context (seq_lens) in this batch
  float scale = 0.0f;              // multiplies q . k; > 0 (usually 1 / sqrt(head_dim))
  float logit_softcap = 0.0f;      // > 0: score = cap * tanh(score / cap) before the softmax
  // > 0: a query at position p sees positions p - sliding_window + 1 .. p (the window most recent
  // ones, itself included; llama.cpp and HF mask p - j >= window); 0: all of 0 .. p.
  int sliding_window = 0;
  // Elements from one query token's row to the next: 0 for dense rows (num_heads * head_dim);
  // wider when q sits in a fused q|k|v projection. A multiple of 8.
  int64_t q_row_stride = 0;
  // [num_heads] device floats, or null: each query head's sink logit joins its softmax (in the
  // max and the denominator, after scaling and soft-cap) without a value: p_j = exp(s_j) /
  // (sum_i exp(s_i) + exp(sink)) (gpt-oss; the CPU's AttentionOptions::sinks).
  const float* sinks = nullptr;
};

// q:               [num_tokens, num_heads * head_dim], rows q_row_stride apart when it is set
// k_cache, v_cache: one layer, [num_blocks, block_size, num_kv_heads, head_dim]
// block_tables:    [num_requests, max_blocks_per_request]
// query_start_loc: [num_requests + 1]
// seq_lens:        [num_requests] context length after this step
// positions:       [num_tokens]
// out:             [num_tokens, num_heads * head_dim]
// workspace:       at least paged_attention_workspace_bytes(params) bytes (for split-KV partials)
template <typename T>
KernelStatus paged_attention(const PagedAttentionParams& params, const T* q, const T* k_cache,
                             const T* v_cache, const int32_t* block_tables,
                             const int32_t* query_start_loc, const int32_t* seq_lens,
                             const int32_t* positions, T* out, void* workspace,
                             size_t workspace_bytes, cudaStream_t stream);

// As paged_attention, over an FP8 E4M3 cache (kv_cache_fp8.cuh): each key and value row is its
// codes times its row's scale.
template <typename T>
KernelStatus paged_attention_fp8(const PagedAttentionParams& params, const T* q,
                                 const Fp8KvLayer& cache, const int32_t* block_tables,
                                 const int32_t* query_start_loc, const int32_t* seq_lens,
                                 const int32_t* positions, T* out, void* workspace,
                                 size_t workspace_bytes, cudaStream_t stream);

// Returns the workspace the call with these params needs (0 when none).
size_t paged_attention_workspace_bytes(const PagedAttentionParams& params);

}  // namespace sluice::kernels
