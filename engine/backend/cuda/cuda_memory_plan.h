// The arithmetic of the CUDA backend's memory and step shapes, with no CUDA in it so that it is
// unit-tested on any machine (tests/unit/backend/cuda_memory_plan_test.cpp).
//
// Memory, as vLLM's profile run does it: the weights are uploaded first, then the activations
// and workspaces of the largest step the engine may schedule (max_num_batched_tokens tokens,
// max_num_seqs logits rows, attention and sampling workspaces) are allocated, and only then is
// the device asked how much is in use. The KV pool gets what is left of
// gpu_memory_utilization x device total:
//   kv_cache_bytes = utilization * total - (total - free)
// so memory used by other processes and by the CUDA context counts against the budget, and the
// pool can never exceed what is free.
//
// Shapes: decode-only steps run as CUDA graphs captured per (batch bucket, context bucket); a
// step of n decode requests is padded to the smallest bucket >= n with rows that write their K/V
// into a reserved padding block and whose logits are dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/backend/batch_inputs.h"
#include "engine/model/model_config.h"

namespace sluice {

// Returns the bytes of the per-step activation buffers for steps of up to max_num_tokens tokens
// of which up to max_num_logits_rows need logits, with activations of element_bytes each:
// residual stream (x2), normed input, q, k, v, attention output, gate and up per token; gathered
// rows (x3) per logits row; fp32 logits per logits row. Every buffer is 256-byte aligned.
size_t cuda_activation_bytes(const ModelConfig& config, size_t element_bytes, int max_num_tokens,
                             int max_num_logits_rows);

// A hybrid DeltaNet layer's stacked input product per token: q|k|v (conv_dim), z (value_dim),
// b and alpha (num_v_heads each).
inline int cuda_deltanet_row_width(const ModelConfig& config) {
  const DeltaNetConfig& d = config.deltanet;
  return d.conv_dim() + d.value_dim() + 2 * d.num_v_heads;
}

// The step buffers of Qwen3.5's layers (0 for other models), part of cuda_activation_bytes:
// DeltaNet layers: the stacked input product and the delta rule's output in fp32, the gated
// norm's output; the gated attention: the doubled q projection and its gate; the shared expert:
// its gate|up, its fp32 output and router logit.
size_t cuda_hybrid_activation_bytes(const ModelConfig& config, size_t element_bytes,
                                    int max_num_tokens);

// The CUDA backend's KV cache for one layer: K and V of [num_slots, num_kv_heads, head_dim] in
// the activation type, or, with KvCacheDType::Fp8, one byte per element plus a float scale per
// (slot, KV head) for each of K and V. Byte offsets within the layer's region, 256-byte aligned.
struct CudaKvLayerLayout {
  size_t k = 0;
  size_t v = 0;
  size_t k_scales = 0;  // FP8 only
  size_t v_scales = 0;  // FP8 only
  size_t total_bytes = 0;
};

// Returns the layer layout for num_slots slots.
CudaKvLayerLayout cuda_kv_layer_layout(const ModelConfig& config, size_t element_bytes,
                                       KvCacheDType dtype, size_t num_slots);

// Returns the bytes one token takes in the KV cache over the attention layers, K and V (scales
// included).
size_t cuda_kv_bytes_per_token(const ModelConfig& config, size_t element_bytes, KvCacheDType dtype);

// Where each field of a step's BatchInputs lies in its staged copy (one contiguous block that
// goes to the device in a single transfer): byte offsets, each 16-byte aligned. The layout is a
// function of the counts alone, so a padded decode batch of a given bucket always lands at the
// same offsets and a captured graph can read it there.
struct CudaBatchLayout {
  size_t token_ids = 0;        // int32 [num_tokens]
  size_t positions = 0;        // int32 [num_tokens]
  size_t slot_mapping = 0;     // int64 [num_tokens]
  size_t query_start_loc = 0;  // int32 [num_requests + 1]
  size_t seq_lens = 0;         // int32 [num_requests]
  size_t block_tables = 0;     // int32 [num_requests, max_blocks_per_request]
  size_t logits_indices = 0;   // int32 [num_logits_rows]
  size_t state_slots = 0;      // int32 [num_requests] (hybrid models; unused otherwise)
  size_t total_bytes = 0;
};

// Returns the layout for these counts.
CudaBatchLayout cuda_batch_layout(int num_tokens, int num_requests, int max_blocks_per_request,
                                  int num_logits_rows);

struct CudaMemoryPlanInputs {
  size_t device_total_bytes = 0;
  // Free device memory measured after the weights, activations and workspaces were allocated.
  size_t device_free_bytes = 0;
  double gpu_memory_utilization = 0.90;  // (0, 1]
  size_t kv_block_bytes = 0;             // one block over all layers, K and V
  int num_reserved_blocks = 1;           // blocks the backend keeps beyond the engine's pool
};

struct CudaMemoryPlan {
  size_t budget_bytes = 0;    // gpu_memory_utilization x device total
  size_t in_use_bytes = 0;    // device total - free: weights, activations, context, others
  size_t kv_cache_bytes = 0;  // the engine's pool: num_kv_blocks x kv_block_bytes
  int num_kv_blocks = 0;
};

// Returns the KV pool that fits the budget. Throws Error, with the numbers, when the budget is
// already spent or leaves less than one block.
CudaMemoryPlan plan_cuda_kv_cache(const CudaMemoryPlanInputs& inputs);

// One line for logs: "KV pool 61.2 GiB (3915 blocks): 0.90 x 79.1 GiB budget, 9.9 GiB in use".
std::string describe(const CudaMemoryPlan& plan);

// Returns the batch sizes decode graphs are captured for: 1, 2, 4, ... up to the first power of
// two >= max_batch_size. Precondition: max_batch_size >= 1.
std::vector<int> cuda_graph_batch_sizes(int max_batch_size);

// Returns the smallest of batch_sizes (ascending) >= num_requests, or 0 when there is none.
int cuda_graph_batch_bucket(int num_requests, const std::vector<int>& batch_sizes);

// Returns the context length a decode graph is captured for: the power of two >= max_seq_len
// (at least 256), capped at max_model_len, rounded up to a multiple of block_size.
int cuda_graph_seq_len_bucket(int max_seq_len, int max_model_len, int block_size);

// Returns true when every request of the batch has exactly one query token and every token's
// logits are wanted, in order: the shape decode graphs replay.
bool is_uniform_decode(const BatchInputs& inputs);

// Writes to `out` the decode batch `in` padded to batch_size rows, its block tables re-strided to
// max_blocks_per_request. Padding rows: token 0 at position 0, KV slot at the start of
// padding_block_id, context 1 read from that block, logits row kept (the caller drops it).
// Preconditions: is_uniform_decode(in); batch_size >= in.num_requests(); every request's context
// fits max_blocks_per_request blocks.
void pad_decode_batch(const BatchInputs& in, int batch_size, int max_blocks_per_request,
                      int32_t padding_block_id, int block_size, BatchInputs& out);

}  // namespace sluice
