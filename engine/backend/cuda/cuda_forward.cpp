#include "engine/backend/cuda/cuda_forward.h"

#include <cassert>
#include <cmath>
#include <utility>

#include "engine/backend/cuda/cuda_types.h"
#include "kernels/elementwise.cuh"
#include "kernels/embedding.cuh"
#include "kernels/rms_norm.cuh"
#include "kernels/rope_cache.cuh"

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
  p.scale = 1.0f / std::sqrt(static_cast<float>(config.head_dim));
  return p;
}

namespace {

template <typename T>
class ForwardPass {
 public:
  ForwardPass(const ForwardContext& c, const DeviceBatch& batch, const ForwardShape& shape)
      : c_(c),
        cfg_(c.config),
        batch_(batch),
        shape_(shape),
        residual_(static_cast<T*>(c.buffers.residual)),
        spare_(static_cast<T*>(c.buffers.residual_alt)),
        normed_(static_cast<T*>(c.buffers.normed)),
        ab_type_(cuda_data_type(c.dtype)) {}

  void run() {
    const int n = shape_.num_tokens;
    SLUICE_KERNEL_CHECK(kernels::embedding_gather<T>(
        static_cast<const T*>(c_.weights.token_embedding()), batch_.token_ids, residual_, n,
        cfg_.hidden_size, cfg_.vocab_size, c_.stream));
    for (int l = 0; l < cfg_.num_layers; ++l) run_layer(l);
    compute_logits();
  }

 private:
  // residual += spare (the pending projection), normed = rms_norm(residual) * weight. The sum
  // is written over spare (residual_out may alias x), which then becomes the residual stream.
  void add_and_norm(const float* weight, bool has_pending) {
    const int n = shape_.num_tokens;
    if (!has_pending) {
      SLUICE_KERNEL_CHECK(kernels::rms_norm_residual<T>(residual_, nullptr, residual_, weight,
                                                        cfg_.rms_norm_eps, normed_, n,
                                                        cfg_.hidden_size, c_.stream));
      return;
    }
    SLUICE_KERNEL_CHECK(kernels::rms_norm_residual<T>(spare_, residual_, spare_, weight,
                                                      cfg_.rms_norm_eps, normed_, n,
                                                      cfg_.hidden_size, c_.stream));
    std::swap(residual_, spare_);
  }

  void linear(const void* x, const void* w, void* y, int in_features, int out_features,
              int x_row_stride = 0) {
    c_.gemm.linear(x, w, y, shape_.num_tokens, in_features, out_features, ab_type_, ab_type_,
                   x_row_stride);
  }

  void run_layer(int l) {
    const CudaLayerWeights& w = c_.weights.layer(l);
    const ForwardBuffers& b = c_.buffers;
    const int n = shape_.num_tokens;
    const int hidden = cfg_.hidden_size;
    add_and_norm(w.attn_norm, /*has_pending=*/l > 0);
    const int q_size = cfg_.q_size();
    const int kv_size = cfg_.kv_size();
    const int qkv_size = q_size + 2 * kv_size;
    auto* q = static_cast<T*>(b.qkv);
    linear(normed_, w.wqkv, q, hidden, qkv_size);
    if (w.bqkv) SLUICE_KERNEL_CHECK(kernels::add_bias<T>(q, w.bqkv, n, qkv_size, c_.stream));
    auto* k_cache = static_cast<T*>(c_.kv.k[static_cast<size_t>(l)]);
    auto* v_cache = static_cast<T*>(c_.kv.v[static_cast<size_t>(l)]);
    SLUICE_KERNEL_CHECK(kernels::rope_and_cache<T>(
        q, q + q_size, q + q_size + kv_size, batch_.positions, batch_.slot_mapping,
        c_.weights.rope_inv_freq(), cfg_.rope_layout == RopeLayout::Interleaved, k_cache, v_cache,
        n, cfg_.num_heads, cfg_.num_kv_heads, cfg_.head_dim, c_.kv.block_size, qkv_size,
        c_.stream));
    SLUICE_KERNEL_CHECK(kernels::paged_attention<T>(
        attention_params(cfg_, c_.kv.block_size, shape_), q, k_cache, v_cache, batch_.block_tables,
        batch_.query_start_loc, batch_.seq_lens, batch_.positions, static_cast<T*>(b.attn),
        b.attention_workspace, b.attention_workspace_bytes, c_.stream));
    linear(b.attn, w.wo, spare_, cfg_.q_size(), hidden);

    add_and_norm(w.ffn_norm, /*has_pending=*/true);
    const int ffn = cfg_.intermediate_size;
    auto* gate_up = static_cast<T*>(b.gate_up);
    linear(normed_, w.w_gate_up, gate_up, hidden, 2 * ffn);
    // silu(gate) * up over the gate half of each row, read from there by the down product.
    SLUICE_KERNEL_CHECK(
        kernels::silu_mul_rows<T>(gate_up, gate_up + ffn, gate_up, n, ffn, 2 * ffn, c_.stream));
    linear(gate_up, w.w_down, spare_, ffn, hidden, 2 * ffn);
  }

  // Only the rows that sample go through the final norm and the LM head: the last layer's
  // down projection and the residual stream are gathered for them, added and normed.
  void compute_logits() {
    const int rows = shape_.num_logits_rows;
    if (rows == 0) return;
    const ForwardBuffers& b = c_.buffers;
    const int hidden = cfg_.hidden_size;
    auto* gathered = static_cast<T*>(b.gathered);
    auto* gathered_residual = static_cast<T*>(b.gathered_residual);
    auto* final_normed = static_cast<T*>(b.final_normed);
    SLUICE_KERNEL_CHECK(
        kernels::gather_rows<T>(spare_, batch_.logits_indices, gathered, rows, hidden, c_.stream));
    SLUICE_KERNEL_CHECK(kernels::gather_rows<T>(residual_, batch_.logits_indices, gathered_residual,
                                                rows, hidden, c_.stream));
    SLUICE_KERNEL_CHECK(kernels::rms_norm_residual<T>(gathered, gathered_residual, gathered,
                                                      c_.weights.final_norm(), cfg_.rms_norm_eps,
                                                      final_normed, rows, hidden, c_.stream));
    // fp32 logits straight from the product's fp32 accumulator: no rounding to the activation
    // type before sampling.
    c_.gemm.linear(final_normed, c_.weights.lm_head(), b.logits, rows, hidden, cfg_.vocab_size,
                   ab_type_, CUDA_R_32F);
  }

  const ForwardContext& c_;
  const ModelConfig& cfg_;
  const DeviceBatch& batch_;
  const ForwardShape& shape_;
  T* residual_;  // the residual stream
  T* spare_;     // the latest projection, waiting for its residual add
  T* normed_;
  cudaDataType ab_type_;
};

}  // namespace

void enqueue_forward(const ForwardContext& context, const DeviceBatch& batch,
                     const ForwardShape& shape) {
  assert(context.config.num_layers >= 1 && shape.num_tokens >= 1);  // validated config, a step
  visit_activation_type(context.dtype, [&](auto tag) {
    ForwardPass<typename decltype(tag)::type>(context, batch, shape).run();
  });
}

}  // namespace sluice
