// The step's activation buffers carved out of one allocation, and the attention parameters of a
// step's shape (cuda_forward.h).
#include <cstddef>
#include <cstdint>

#include "engine/backend/cuda/cuda_buffer.h"
#include "engine/backend/cuda/cuda_forward.h"
#include "engine/backend/cuda/cuda_memory_plan.h"

namespace sluice {

ForwardBuffers carve_forward_buffers(void* base, const ModelConfig& config, size_t element_bytes,
                                     int max_tokens, int max_rows) {
  auto* cursor = static_cast<unsigned char*>(base);
  auto take = [&cursor](size_t bytes) {
    void* p = cursor;
    cursor += align_256(bytes);
    return p;
  };
  const auto tokens = static_cast<size_t>(max_tokens);
  const auto rows = static_cast<size_t>(max_rows);
  const auto hidden = static_cast<size_t>(config.hidden_size);
  const auto q = static_cast<size_t>(config.q_size());
  const auto kv = static_cast<size_t>(config.kv_size());
  const auto ffn = static_cast<size_t>(config.intermediate_size);
  ForwardBuffers b;
  // The order and sizes of cuda_activation_bytes.
  b.residual = take(tokens * hidden * element_bytes);
  b.residual_alt = take(tokens * hidden * element_bytes);
  b.normed = take(tokens * hidden * element_bytes);
  b.qkv = take(tokens * (q + 2 * kv) * element_bytes);
  b.attn = take(tokens * q * element_bytes);
  b.gate_up = take(tokens * 2 * ffn * element_bytes);
  b.gathered = take(rows * hidden * element_bytes);
  b.gathered_residual = take(rows * hidden * element_bytes);
  b.final_normed = take(rows * hidden * element_bytes);
  b.logits = static_cast<float*>(take(rows * static_cast<size_t>(config.vocab_size) * 4));
  if (config.is_moe()) {
    const auto experts = static_cast<size_t>(config.num_experts);
    const auto slots = tokens * static_cast<size_t>(config.num_experts_used);
    const auto expert_ffn = static_cast<size_t>(config.expert_intermediate_size);
    b.moe_x = static_cast<float*>(take(tokens * hidden * sizeof(float)));
    b.moe_logits = static_cast<float*>(take(tokens * experts * sizeof(float)));
    b.moe_ids = static_cast<int32_t*>(take(slots * sizeof(int32_t)));
    b.moe_weights = static_cast<float*>(take(slots * sizeof(float)));
    b.moe_rows = static_cast<int32_t*>(take(2 * slots * sizeof(int32_t)));
    b.moe_gathered = take(slots * hidden * element_bytes);
    b.moe_gate_up = take(slots * 2 * expert_ffn * element_bytes);
    b.moe_out = static_cast<float*>(take(slots * hidden * sizeof(float)));
  }
  // The order and sizes of cuda_hybrid_activation_bytes.
  if (config.is_hybrid()) {
    const auto value = static_cast<size_t>(config.deltanet.value_dim());
    b.dn_proj = static_cast<float*>(
        take(tokens * static_cast<size_t>(cuda_deltanet_row_width(config)) * sizeof(float)));
    b.dn_out = static_cast<float*>(take(tokens * value * sizeof(float)));
    b.dn_normed = take(tokens * value * element_bytes);
  }
  if (config.attn_output_gate) {
    b.gated_q = take(tokens * (2 * q + 2 * kv) * element_bytes);
    b.attn_gate = take(tokens * q * element_bytes);
  }
  if (config.shared_expert_intermediate_size > 0) {
    const auto shared_ffn = static_cast<size_t>(config.shared_expert_intermediate_size);
    b.shexp_gate_up = take(tokens * 2 * shared_ffn * element_bytes);
    b.shexp_out = static_cast<float*>(take(tokens * hidden * sizeof(float)));
    b.shexp_logit = static_cast<float*>(take(tokens * sizeof(float)));
  }
  return b;
}

kernels::PagedAttentionParams attention_params(const ModelConfig& config, int block_size,
                                               const ForwardShape& shape) {
  kernels::PagedAttentionParams p;
  p.q_row_stride = config.q_size() + 2 * static_cast<int64_t>(config.kv_size());  // q in q|k|v
  p.num_tokens = shape.num_tokens;
  p.num_requests = shape.num_requests;
  p.num_heads = config.num_heads;
  p.num_kv_heads = config.num_kv_heads;
  p.head_dim = config.head_dim;
  p.block_size = block_size;
  p.max_blocks_per_request = shape.max_blocks_per_request;
  p.max_query_len = shape.max_query_len;
  p.min_query_len = shape.min_query_len;
  p.max_seq_len = shape.max_seq_len;
  p.scale = config.effective_attention_scale();
  return p;
}

}  // namespace sluice
