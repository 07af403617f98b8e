#include "engine/backend/cuda/cuda_forward.h"

#include <cassert>
#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include "engine/backend/cuda/cuda_memory_plan.h"
#include "engine/backend/cuda/cuda_types.h"
#include "engine/backend/cuda/dense_gemv_choice.h"
#include "engine/core/error.h"
#include "engine/model/forward_pass.h"
#include "kernels/dequantize.cuh"
#include "kernels/elementwise.cuh"
#include "kernels/embedding.cuh"
#include "kernels/gated_delta_net.cuh"
#include "kernels/head_norm.cuh"
#include "kernels/moe.cuh"
#include "kernels/quant_linear.cuh"
#include "kernels/rms_norm.cuh"
#include "kernels/rope_cache.cuh"
#include "kernels/sigmoid_gates.cuh"

namespace sluice {

namespace {

// The primitives of the one forward pass (engine/model/forward_pass.h) as launches on one stream.
// Two fusions shape the buffers: Q, K and V are column ranges of one q|k|v product, and
// act(gate) * up is written over the gate half of one gate|up product; RoPE is applied by the
// kernel that writes K and V into the cache, so rope() only marks the layer and attention()
// launches it. The residual stream and the pending projection swap buffers at each add (the sum
// is written over the projection). An option a model does not use costs no launch: q/k head
// norms, post norms and the logit soft-cap are launched only by the models that have them, and
// the embedding scale, GeGLU, partial rotary and per-layer RoPE tables are parameters of
// launches every model makes.
template <typename T>
class CudaForwardOps final : public ForwardOps {
 public:
  CudaForwardOps(const ForwardContext& c, const DeviceBatch& batch, const ForwardShape& shape)
      : c_(c),
        cfg_(c.config),
        batch_(batch),
        shape_(shape),
        residual_(static_cast<T*>(c.buffers.residual)),
        spare_(static_cast<T*>(c.buffers.residual_alt)),
        normed_(static_cast<T*>(c.buffers.normed)),
        ab_type_(cuda_data_type(c.dtype)) {
    // Where each DeltaNet layer's state lies in a slot: the layers one after the other.
    int64_t offset = 0;
    for (int l = 0; l < cfg_.num_layers; ++l) {
      state_offset_.push_back(offset);
      if (cfg_.is_deltanet_layer(l)) offset += cfg_.deltanet.state_floats();
    }
  }

  // From the table in the activation type, or decoded from its blocks row by row.
  void embed(float scale) override {
    const CudaMatrix& table = c_.weights.token_embedding();
    if (const void* dense = table.dense()) {
      SLUICE_KERNEL_CHECK(kernels::embedding_gather<T>(
          static_cast<const T*>(dense), batch_.token_ids, residual_, shape_.num_tokens,
          cfg_.hidden_size, cfg_.vocab_size, scale, c_.stream));
      return;
    }
    const CudaMatrixRun& run = table.runs.front();  // one tensor: one run
    SLUICE_KERNEL_CHECK(kernels::dequantize_rows<T>(
        run.format, static_cast<const uint8_t*>(run.data), run.row_bytes, batch_.token_ids,
        residual_, shape_.num_tokens, cfg_.hidden_size, cfg_.vocab_size, scale, c_.stream));
  }

  // The first layer's input norm (Residual -> Normed) and Gemma's post norms (Proj in place).
  void norm(StepBuffer x, StepBuffer out, WeightRef weight) override {
    assert((x == StepBuffer::Residual && out == StepBuffer::Normed) ||
           (x == StepBuffer::Proj && out == StepBuffer::Proj));  // what run_forward asks for
    const float* w = norm_weight(weight);
    if (out == StepBuffer::Normed) {
      norm_into_normed(buffer(x), nullptr, nullptr, w);
      return;
    }
    SLUICE_KERNEL_CHECK(
        kernels::rms_norm_residual<T>(buffer(x), nullptr, nullptr, w, cfg_.rms_norm_eps,
                                      buffer(out), shape_.num_tokens, cfg_.hidden_size, c_.stream));
  }

  // residual + pending is written over the pending buffer, which becomes the residual stream.
  void add_and_norm(StepBuffer pending, WeightRef weight) override {
    assert(pending == StepBuffer::Proj);
    (void)pending;
    norm_into_normed(spare_, residual_, spare_, norm_weight(weight));
    std::swap(residual_, spare_);
  }

  // The norm into Normed. When the products that read it take the integer GEMV, the same launch
  // quantizes its output for them (normed_q8_), so that they need not.
  void norm_into_normed(const T* x, const T* residual_in, T* residual_out, const float* w) {
    normed_q8_.reset();
    if constexpr (!std::is_same_v<T, float>) {
      const QuantProducts* q = c_.quant;
      const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
      if (q && q->normed_q8 && q->int8_gemv && shape_.num_tokens <= q->gemv_tokens() &&
          shape_.num_tokens <= kernels::kQuantInt8GemvMaxTokens && aligned(x) &&
          aligned(residual_in) && aligned(residual_out) && aligned(normed_)) {
        const kernels::Q8Rows q8 =
            kernels::q8_rows_in(q->normed_q8, shape_.num_tokens, cfg_.hidden_size);
        SLUICE_KERNEL_CHECK(kernels::rms_norm_residual_q8<T>(
            x, residual_in, residual_out, w, cfg_.rms_norm_eps, normed_, q8, shape_.num_tokens,
            cfg_.hidden_size, c_.stream));
        normed_q8_ = q8;
        ++q->num_fused_norms;
        return;
      }
    }
    SLUICE_KERNEL_CHECK(kernels::rms_norm_residual<T>(x, residual_in, residual_out, w,
                                                      cfg_.rms_norm_eps, normed_, shape_.num_tokens,
                                                      cfg_.hidden_size, c_.stream));
  }

  void qkv_projection(int l) override {
    auto* qkv = static_cast<T*>(c_.buffers.qkv);
    if (cfg_.attn_output_gate) {
      // Per head [q | gate] rows, then k | v: q|k|v as every other model's, the gate kept.
      if (c_.weights.layer(l).vectors[WeightRole::Bq])
        fail("the CUDA backend has no q|k|v biases with an attention output gate");
      auto* gated = static_cast<T*>(c_.buffers.gated_q);
      linear_raw(normed_, c_.weights.matrix({WeightRole::Wqkv, l}), gated);
      SLUICE_KERNEL_CHECK(kernels::split_gated_q<T>(
          gated, qkv, static_cast<T*>(c_.buffers.attn_gate), shape_.num_tokens, cfg_.num_heads,
          cfg_.head_dim, 2 * cfg_.kv_size(), c_.stream));
      return;
    }
    linear_raw(normed_, c_.weights.matrix({WeightRole::Wqkv, l}), qkv);
    // The q, k and v biases, stacked as the product is (cuda_weights.h).
    if (const float* bias = c_.weights.layer(l).vectors[WeightRole::Bq]) {
      SLUICE_KERNEL_CHECK(
          kernels::add_bias<T>(qkv, bias, shape_.num_tokens, qkv_size(), c_.stream));
    }
  }

  // Q and K heads in one launch, in place in the q|k|v rows, before rope_and_cache rotates them.
  void head_norms(int l) override {
    auto* q = static_cast<T*>(c_.buffers.qkv);
    SLUICE_KERNEL_CHECK(kernels::head_rms_norm<T>(
        q, q + cfg_.q_size(), c_.weights.vector({WeightRole::QNorm, l}),
        c_.weights.vector({WeightRole::KNorm, l}), cfg_.rms_norm_eps, shape_.num_tokens,
        cfg_.num_heads, cfg_.num_kv_heads, cfg_.head_dim, qkv_size(), c_.stream));
  }

  void rope(int l) override { rope_layer_ = l; }

  void attention(int l, const AttentionOptions& options) override {
    assert(rope_layer_ == l);  // RoPE is fused into the cache write below
    const ForwardBuffers& b = c_.buffers;
    auto* q = static_cast<T*>(b.qkv);
    const int q_size = cfg_.q_size();
    const int kv_size = cfg_.kv_size();
    const auto layer = static_cast<size_t>(l);
    // An FP8 cache is written after RoPE by its own kernel (the write quantizes whole rows).
    auto* k_cache = c_.kv.is_fp8 ? nullptr : static_cast<T*>(c_.kv.k[layer]);
    auto* v_cache = c_.kv.is_fp8 ? nullptr : static_cast<T*>(c_.kv.v[layer]);
    T* k = q + q_size;
    T* v = k + kv_size;
    SLUICE_KERNEL_CHECK(kernels::rope_and_cache<T>(
        q, k, v, batch_.positions, batch_.slot_mapping, c_.weights.layer(l).rope_inv_freq,
        cfg_.rope_layout == RopeLayout::Interleaved, k_cache, v_cache, shape_.num_tokens,
        cfg_.num_heads, cfg_.num_kv_heads, cfg_.head_dim, cfg_.rope_dims(), c_.kv.block_size,
        qkv_size(), c_.stream));
    kernels::PagedAttentionParams params = attention_params(cfg_, c_.kv.block_size, shape_);
    params.scale = options.scale;
    params.logit_softcap = options.logit_softcap;
    params.sliding_window = options.sliding_window;
    params.sinks = options.sinks ? c_.weights.vector({WeightRole::Sinks, l}) : nullptr;
    if (c_.kv.is_fp8) {
      const kernels::Fp8KvLayer cache{static_cast<uint8_t*>(c_.kv.k[layer]),
                                      static_cast<uint8_t*>(c_.kv.v[layer]), c_.kv.k_scales[layer],
                                      c_.kv.v_scales[layer]};
      SLUICE_KERNEL_CHECK(kernels::write_kv_cache_fp8<T>(
          k, v, qkv_size(), batch_.slot_mapping, cache, shape_.num_tokens, cfg_.num_kv_heads,
          cfg_.head_dim, c_.stream));
      SLUICE_KERNEL_CHECK(kernels::paged_attention_fp8<T>(
          params, q, cache, batch_.block_tables, batch_.query_start_loc, batch_.seq_lens,
          batch_.positions, static_cast<T*>(b.attn), b.attention_workspace,
          b.attention_workspace_bytes, c_.stream));
      return;
    }
    SLUICE_KERNEL_CHECK(kernels::paged_attention<T>(
        params, q, k_cache, v_cache, batch_.block_tables, batch_.query_start_loc, batch_.seq_lens,
        batch_.positions, static_cast<T*>(b.attn), b.attention_workspace,
        b.attention_workspace_bytes, c_.stream));
  }

  // Hidden is read over the gate half of the gate|up rows, where gated_ffn left act(gate) * up.
  void linear(StepBuffer x, WeightRef weight, StepBuffer out) override {
    const int x_row_stride = x == StepBuffer::Hidden ? 2 * cfg_.intermediate_size : 0;
    linear_raw(input(x), c_.weights.matrix(weight), buffer(out), x_row_stride);
  }

  // The attention output's bias (gpt-oss's Bo, [hidden]) on the pending projection: the only
  // bias run_forward adds on its own (q|k|v's go with their product).
  void add_bias(StepBuffer x, WeightRef bias) override {
    if (bias.role != WeightRole::Bo)
      fail("the CUDA backend adds no ", weight_role_name(bias.role), " bias on its own");
    SLUICE_KERNEL_CHECK(kernels::add_bias<T>(buffer(x), c_.weights.vector(bias), shape_.num_tokens,
                                             cfg_.hidden_size, c_.stream));
  }
  // Attn *= sigmoid(the gate qkv_projection split from the doubled q rows).
  void attention_output_gate(int l) override {
    (void)l;
    if (!c_.buffers.attn_gate) fail("the CUDA backend got an output gate in a model without one");
    SLUICE_KERNEL_CHECK(kernels::sigmoid_gate_mul<T>(
        static_cast<T*>(c_.buffers.attn), static_cast<const T*>(c_.buffers.attn_gate),
        static_cast<int64_t>(shape_.num_tokens) * cfg_.q_size(), c_.stream));
  }

  // One fp32 product per token [q|k|v | z | b | alpha], the convolution in place, the delta rule
  // over each request's tokens in order, the gated norm into T, the output product into Proj.
  void gated_delta_net(int l) override {
    const DeltaNetConfig& d = cfg_.deltanet;
    const ForwardBuffers& b = c_.buffers;
    if (!b.dn_proj || !c_.states.base)
      fail("the CUDA backend got a DeltaNet layer without its buffers or state slots");
    const int width = cuda_deltanet_row_width(cfg_);
    float* proj = b.dn_proj;
    product(normed_, 0, c_.weights.matrix({WeightRole::SsmQkv, l}), proj, shape_.num_tokens);
    const kernels::DeltaNetRequests requests{batch_.query_start_loc, batch_.seq_lens,
                                             batch_.state_slots,     shape_.num_requests,
                                             c_.states.base,         c_.states.slot_floats};
    const int64_t offset = state_offset_[static_cast<size_t>(l)];
    SLUICE_KERNEL_CHECK(
        kernels::deltanet_conv(proj, width, c_.weights.vector({WeightRole::SsmConv, l}),
                               d.conv_dim(), d.conv_kernel, requests, offset, c_.stream));
    const float* z = proj + d.conv_dim();
    const float* beta = z + d.value_dim();
    const kernels::DeltaRuleShape shape{d.num_k_heads, d.num_v_heads,     d.k_head_dim,
                                        d.v_head_dim,  d.grouped_v_heads, cfg_.rms_norm_eps};
    SLUICE_KERNEL_CHECK(kernels::gated_delta_rule(
        proj, width, beta, beta + d.num_v_heads, width, c_.weights.vector({WeightRole::SsmA, l}),
        c_.weights.vector({WeightRole::SsmDt, l}), b.dn_out, shape, requests,
        offset + d.conv_state_floats(), c_.stream));
    auto* normed = static_cast<T*>(b.dn_normed);
    SLUICE_KERNEL_CHECK(kernels::gated_rms_norm<T>(
        b.dn_out, z, width, c_.weights.vector({WeightRole::SsmNorm, l}), cfg_.rms_norm_eps, normed,
        shape_.num_tokens, d.num_v_heads, d.v_head_dim, c_.stream));
    linear_raw(normed, c_.weights.matrix({WeightRole::SsmOut, l}), spare_);
  }

  void moe_ffn(int l, const MoeOptions& options) override {
    if (!c_.moe) fail("the CUDA backend got a mixture-of-experts layer in a dense model");
    if (static_cast<size_t>(l) < c_.moe->host_experts.size()) {
      host_moe_ffn(l, options);
    } else {
      device_moe_ffn(l, options);
    }
    if (options.shared_expert) shared_expert(l);
  }

  void gated_ffn(int l, Activation activation) override {
    const int ffn = cfg_.intermediate_size;
    auto* gate_up = static_cast<T*>(c_.buffers.gate_up);
    linear_raw(normed_, c_.weights.matrix({WeightRole::GateUp, l}), gate_up);
    // act(gate) * up over the gate half of each row, read from there by the down product; when
    // that takes the integer GEMV, quantized for it in the same launch (hidden_q8_).
    hidden_q8_.reset();
    if constexpr (!std::is_same_v<T, float>) {
      const QuantProducts* q = c_.quant;
      const int n = shape_.num_tokens;
      if (q && q->hidden_q8 && q->int8_gemv && n <= q->gemv_tokens() &&
          n <= kernels::kQuantInt8GemvMaxTokens && ffn % 32 == 0) {
        const kernels::Q8Rows q8 = kernels::q8_rows_in(q->hidden_q8, n, ffn);
        SLUICE_KERNEL_CHECK(kernels::gated_mul_rows_q8<T>(gated_kind(activation), gate_up,
                                                          gate_up + ffn, gate_up, n, ffn, 2 * ffn,
                                                          q8, c_.stream));
        hidden_q8_ = q8;
        ++q->num_fused_activations;
        return;
      }
    }
    gated_activation(activation, gate_up, shape_.num_tokens, ffn);
  }

  static kernels::GatedActivation gated_kind(Activation activation) {
    return activation == Activation::GeluTanh    ? kernels::GatedActivation::GeluTanh
           : activation == Activation::SwigluOai ? kernels::GatedActivation::SwigluOai
                                                 : kernels::GatedActivation::Silu;
  }

  // Only the rows that sample go through the final norm and the LM head: the last layer's
  // down projection and the residual stream are gathered for them, added and normed.
  void logits(StepBuffer pending, float softcap) override {
    assert(pending == StepBuffer::Proj);
    (void)pending;
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
    product(final_normed, 0, c_.weights.lm_head(), b.logits, rows);
    if (softcap > 0.0f) {
      SLUICE_KERNEL_CHECK(kernels::soft_cap<float>(
          b.logits, static_cast<int64_t>(rows) * cfg_.vocab_size, softcap, c_.stream));
    }
  }

 private:
  // Proj += sigmoid(Normed . ShexpRouter^T) * (silu(gate) * up) . ShexpDown^T, the router's logit
  // in fp32 from fp32 inputs as the experts' router, the FFN's output in fp32, added in T once.
  void shared_expert(int l) {
    const ForwardBuffers& b = c_.buffers;
    if (!b.shexp_gate_up) fail("the CUDA backend got a shared expert in a model without one");
    const int num_tokens = shape_.num_tokens;
    const int hidden = cfg_.hidden_size;
    const int ffn = cfg_.shared_expert_intermediate_size;
    const CudaMatrix& router = c_.weights.matrix({WeightRole::ShexpRouter, l});
    c_.gemm.linear(normed_fp32(), router.dense(), b.shexp_logit, num_tokens, hidden, 1, CUDA_R_32F,
                   CUDA_R_32F);
    auto* gate_up = static_cast<T*>(b.shexp_gate_up);
    linear_raw(normed_, c_.weights.matrix({WeightRole::ShexpGate, l}), gate_up);
    gated_activation(Activation::Silu, gate_up, num_tokens, ffn);
    product(gate_up, 2 * ffn, c_.weights.matrix({WeightRole::ShexpDown, l}), b.shexp_out,
            num_tokens);
    SLUICE_KERNEL_CHECK(kernels::add_sigmoid_scaled_rows<T>(spare_, b.shexp_logit, b.shexp_out,
                                                            num_tokens, hidden, c_.stream));
  }

  // Normed as fp32 in moe_x (the router's input and the host experts').
  const float* normed_fp32() {
    if constexpr (std::is_same_v<T, float>) {
      return normed_;
    } else {
      const int64_t n = static_cast<int64_t>(shape_.num_tokens) * cfg_.hidden_size;
      SLUICE_KERNEL_CHECK((kernels::convert<T, float>(normed_, c_.buffers.moe_x, n, c_.stream)));
      return c_.buffers.moe_x;
    }
  }

  // The experts of a layer kept in host memory: Normed to the host in fp32, the CPU's moe_ffn,
  // its output back into Proj.
  void host_moe_ffn(int l, const MoeOptions& options) {
    CudaMoeHost& h = *c_.moe;
    const ForwardBuffers& b = c_.buffers;
    const int num_tokens = shape_.num_tokens;
    const int hidden = cfg_.hidden_size;
    const auto n = static_cast<size_t>(num_tokens) * hidden;
    h.x.resize(n);
    h.out.resize(n);
    SLUICE_CUDA_CHECK(cudaMemcpyAsync(h.x.data(), normed_fp32(), n * sizeof(float),
                                      cudaMemcpyDeviceToHost, c_.stream));
    SLUICE_CUDA_CHECK(cudaStreamSynchronize(c_.stream));
    // The routed experts only: a shared expert runs on the device after them (shared_expert).
    MoeOptions routed = options;
    routed.shared_expert = false;
    sluice::moe_ffn(h.host_experts[static_cast<size_t>(l)], routed, h.x.data(), num_tokens, hidden,
                    h.out.data(), *h.pool, h.scratch);
    SLUICE_CUDA_CHECK(cudaMemcpyAsync(b.moe_out, h.out.data(), n * sizeof(float),
                                      cudaMemcpyHostToDevice, c_.stream));
    SLUICE_KERNEL_CHECK(
        (kernels::convert<float, T>(b.moe_out, spare_, static_cast<int64_t>(n), c_.stream)));
  }

  // The router and the choice on the device, the tokens grouped by expert on the host (the
  // choice's only trip there), each chosen expert's products over its rows, then the weighted
  // sum per token in top-k order.
  void device_moe_ffn(int l, const MoeOptions& options) {
    CudaMoeHost& h = *c_.moe;
    const ForwardBuffers& b = c_.buffers;
    const CudaLayerWeights& layer = c_.weights.layer(l);
    const int num_tokens = shape_.num_tokens;
    const int hidden = cfg_.hidden_size;
    const int k = options.top_k;
    const int num_experts = options.num_experts;
    const int num_slots = num_tokens * k;

    // Router logits in fp32 from fp32 inputs and weights.
    const CudaMatrix& router = c_.weights.matrix({WeightRole::Router, l});
    c_.gemm.linear(normed_fp32(), router.dense(), b.moe_logits, num_tokens, hidden, num_experts,
                   CUDA_R_32F, CUDA_R_32F);
    if (const float* bias = layer.vectors[WeightRole::RouterBias]) {
      SLUICE_KERNEL_CHECK(
          kernels::add_bias<float>(b.moe_logits, bias, num_tokens, num_experts, c_.stream));
    }
    const auto gating = options.gating == MoeGating::TopKSoftmax
                            ? kernels::MoeGatingKind::TopKSoftmax
                            : kernels::MoeGatingKind::SoftmaxTopK;
    SLUICE_KERNEL_CHECK(kernels::moe_choose_experts(b.moe_logits, b.moe_ids, b.moe_weights,
                                                    num_tokens, num_experts, k, gating,
                                                    options.renormalize, c_.stream));
    h.ids.resize(static_cast<size_t>(num_slots));
    SLUICE_CUDA_CHECK(cudaMemcpyAsync(h.ids.data(), b.moe_ids, h.ids.size() * sizeof(int32_t),
                                      cudaMemcpyDeviceToHost, c_.stream));
    SLUICE_CUDA_CHECK(cudaStreamSynchronize(c_.stream));
    group_slots_by_expert(num_slots, k, num_experts);
    SLUICE_CUDA_CHECK(cudaMemcpyAsync(b.moe_rows, h.rows.data(), h.rows.size() * sizeof(int32_t),
                                      cudaMemcpyHostToDevice, c_.stream));

    auto* gathered = static_cast<T*>(b.moe_gathered);
    auto* gate_up = static_cast<T*>(b.moe_gate_up);
    SLUICE_KERNEL_CHECK(
        kernels::gather_rows<T>(normed_, b.moe_rows, gathered, num_slots, hidden, c_.stream));
    if (takes_grouped_products(l, num_experts)) {
      grouped_expert_products(l, options, gathered, gate_up, num_slots);
    } else {
      for (int e = 0; e < num_experts; ++e) expert_products(l, e, options, gathered, gate_up);
    }
    SLUICE_KERNEL_CHECK(kernels::moe_combine<T>(b.moe_out, b.moe_rows + num_slots, b.moe_weights,
                                                spare_, num_tokens, k, hidden, c_.stream));
  }

  // Whether layer l's experts multiply this step's rows in one launch per projection: their
  // tables exist, the GEMV is the integer one, and no expert has more rows than the measured
  // GEMV range (past it the per-expert products take the tiles or the widened chunks).
  bool takes_grouped_products(int l, int num_experts) const {
    const CudaMoeHost& h = *c_.moe;
    if (!h.grouped || !c_.quant || !c_.quant->int8_gemv || !h.q8.get()) return false;
    const CudaExpertTables& t = h.tables[static_cast<size_t>(l)];
    if (!t.gate_up) return false;
    for (int e = 0; e < num_experts; ++e) {
      const auto ue = static_cast<size_t>(e);
      if (h.expert_begin[ue + 1] - h.expert_begin[ue] > c_.quant->gemv_tokens()) return false;
    }
    return true;
  }

  // Every chosen expert's gate|up, activation and down over its rows, a launch per projection:
  // the rows quantized once, then the grouped integer GEMV (kernels::quant_gemv_int8_experts).
  void grouped_expert_products(int l, const MoeOptions& options, const T* gathered, T* gate_up,
                               int num_slots) {
    CudaMoeHost& h = *c_.moe;
    const ForwardBuffers& b = c_.buffers;
    const CudaExpertTables& t = h.tables[static_cast<size_t>(l)];
    const int hidden = cfg_.hidden_size;
    const int ffn = cfg_.expert_intermediate_size;
    h.host_groups.clear();
    for (size_t e = 0; e + 1 < h.expert_begin.size(); ++e) {
      const auto rows = static_cast<int>(h.expert_begin[e + 1] - h.expert_begin[e]);
      if (rows > 0) {
        h.host_groups.push_back(
            kernels::ExpertRows{static_cast<int>(e), static_cast<int>(h.expert_begin[e]), rows});
      }
    }
    const int num_groups = static_cast<int>(h.host_groups.size());
    ++h.num_grouped_layers;
    auto* groups = static_cast<kernels::ExpertRows*>(h.groups.get());
    SLUICE_CUDA_CHECK(cudaMemcpyAsync(groups, h.host_groups.data(),
                                      h.host_groups.size() * sizeof(kernels::ExpertRows),
                                      cudaMemcpyHostToDevice, c_.stream));
    const kernels::Q8Rows x = quantize_rows(gathered, hidden, num_slots, hidden);
    SLUICE_KERNEL_CHECK(kernels::quant_gemv_int8_experts<T>(
        t.gate_up_format, t.gate_up, t.gate_up_row_bytes, 2 * ffn, x, groups, num_groups, gate_up,
        2 * ffn, c_.stream));
    if (t.gate_up_bias) {
      SLUICE_KERNEL_CHECK(kernels::add_expert_biases<T>(gate_up, t.gate_up_bias, groups, num_groups,
                                                        2 * ffn, c_.stream));
    }
    gated_activation(options.activation, gate_up, num_slots, ffn);
    const kernels::Q8Rows act = quantize_rows(gate_up, 2 * ffn, num_slots, ffn);
    SLUICE_KERNEL_CHECK(kernels::quant_gemv_int8_experts<float>(
        t.down_format, t.down, t.down_row_bytes, hidden, act, groups, num_groups, b.moe_out, hidden,
        c_.stream));
    if (t.down_bias) {
      SLUICE_KERNEL_CHECK(kernels::add_expert_biases<float>(b.moe_out, t.down_bias, groups,
                                                            num_groups, hidden, c_.stream));
    }
  }

  // rows rows of cols values (row_stride apart) quantized into the grouped products' buffer.
  kernels::Q8Rows quantize_rows(const T* x, int row_stride, int rows, int cols) {
    CudaMoeHost& h = *c_.moe;
    if (kernels::q8_rows_bytes(rows, cols) > h.q8.bytes())
      fail("the grouped expert products' ", rows, " x ", cols, " rows exceed their buffer");
    const kernels::Q8Rows q8 = kernels::q8_rows_in(h.q8.get(), rows, cols);
    SLUICE_KERNEL_CHECK(kernels::quantize_q8_rows<T>(x, row_stride, q8, c_.stream));
    return q8;
  }

  // Expert e's gate|up, activation and down over its rows (none: nothing), each product as
  // product() chooses.
  void expert_products(int l, int e, const MoeOptions& options, const T* gathered, T* gate_up) {
    CudaMoeHost& h = *c_.moe;
    const ForwardBuffers& b = c_.buffers;
    const CudaLayerWeights& layer = c_.weights.layer(l);
    const int hidden = cfg_.hidden_size;
    const int ffn = cfg_.expert_intermediate_size;
    const auto ue = static_cast<size_t>(e);
    const int64_t begin = h.expert_begin[ue];
    const auto rows = static_cast<int>(h.expert_begin[ue + 1] - begin);
    if (rows == 0) return;
    T* expert_gate_up = gate_up + begin * 2 * ffn;
    product(gathered + begin * hidden, 0, layer.experts.gate_up[ue], expert_gate_up, rows);
    if (!layer.experts.gate_up_bias.empty()) {
      SLUICE_KERNEL_CHECK(kernels::add_bias<T>(expert_gate_up, layer.experts.gate_up_bias[ue], rows,
                                               2 * ffn, c_.stream));
    }
    gated_activation(options.activation, expert_gate_up, rows, ffn);
    float* out = b.moe_out + begin * hidden;
    product(expert_gate_up, 2 * ffn, layer.experts.down[ue], out, rows);
    if (!layer.experts.down_bias.empty()) {
      SLUICE_KERNEL_CHECK(
          kernels::add_bias<float>(out, layer.experts.down_bias[ue], rows, hidden, c_.stream));
    }
  }

  // From the choice in moe->ids: each expert's rows [expert_begin[e], expert_begin[e + 1]) hold
  // its slots in token order (as the CPU's moe_ffn groups them); rows = the token of each row,
  // then the row of each slot.
  void group_slots_by_expert(int num_slots, int k, int num_experts) {
    CudaMoeHost& h = *c_.moe;
    h.expert_begin.assign(static_cast<size_t>(num_experts) + 1, 0);
    for (const int32_t id : h.ids) {
      if (id < 0 || id >= num_experts) fail("mixture of experts: the device chose expert ", id);
      ++h.expert_begin[static_cast<size_t>(id) + 1];
    }
    for (size_t e = 1; e < h.expert_begin.size(); ++e) h.expert_begin[e] += h.expert_begin[e - 1];
    h.rows.resize(2 * static_cast<size_t>(num_slots));
    std::vector<int64_t> next(h.expert_begin.begin(), h.expert_begin.end() - 1);
    for (int slot = 0; slot < num_slots; ++slot) {
      const int64_t row = next[static_cast<size_t>(h.ids[static_cast<size_t>(slot)])]++;
      h.rows[static_cast<size_t>(row)] = slot / k;
      h.rows[static_cast<size_t>(num_slots + slot)] = static_cast<int32_t>(row);
    }
  }

  // act(gate) * up over the gate half of rows x [gate | up] rows of 2 * ffn elements.
  void gated_activation(Activation activation, T* gate_up, int rows, int ffn) {
    const auto gated_mul = activation == Activation::GeluTanh    ? &kernels::gelu_tanh_mul_rows<T>
                           : activation == Activation::SwigluOai ? &kernels::swiglu_oai_mul_rows<T>
                                                                 : &kernels::silu_mul_rows<T>;
    SLUICE_KERNEL_CHECK(gated_mul(gate_up, gate_up + ffn, gate_up, rows, ffn, 2 * ffn, c_.stream));
  }

  int qkv_size() const { return cfg_.q_size() + 2 * cfg_.kv_size(); }

  // y[num_tokens, w.rows] = x[num_tokens, w.cols] . w^T, x's rows x_row_stride apart (0: dense).
  void linear_raw(const void* x, const CudaMatrix& w, void* y, int x_row_stride = 0) {
    product(x, x_row_stride, w, static_cast<T*>(y), shape_.num_tokens);
  }

  // y[num_rows, w.rows] = x . w^T in Y (T, or fp32 for the logits): cuBLAS for a matrix in the
  // activation type, else each run from its blocks into its column range of y, or the
  // dequantized way where the measured choice says (quant_products.h).
  template <typename Y>
  void product(const void* x, int x_row_stride, const CudaMatrix& w, Y* y, int num_rows) {
    const void* dense = w.dense();
    const cudaDataType y_type = std::is_same_v<Y, float> ? CUDA_R_32F : ab_type_;
    if (dense && !takes_dense_gemv(w, num_rows, c_.dense_gemv)) {
      c_.gemm.linear(x, dense, y, num_rows, w.cols, w.rows, ab_type_, y_type, x_row_stride);
      return;
    }
    if (!dense && c_.quant && !c_.quant->takes_quant_linear(num_rows)) {
      dequantized_product(c_.gemm, c_.dtype, x, x_row_stride, w, y, y_type, num_rows,
                          c_.quant->scratch, c_.quant->scratch_bytes, c_.stream);
      return;
    }
    // Inputs quantized by the launch that wrote them: Normed by its norm, Hidden (the gate half
    // of gate|up) by the gated activation.
    const bool whole = num_rows == shape_.num_tokens;
    const bool from_normed = whole && x == normed_ && x_row_stride == 0 && normed_q8_;
    const bool from_hidden = whole && x == c_.buffers.gate_up &&
                             x_row_stride == 2 * cfg_.intermediate_size && hidden_q8_;
    direct_product<T, Y>(c_.quant, w, static_cast<const T*>(x), x_row_stride, y, num_rows,
                         c_.stream,
                         from_normed   ? &*normed_q8_
                         : from_hidden ? &*hidden_q8_
                                       : nullptr);
  }

  // The buffers norm() and the products write; the pending projection is the spare residual
  // buffer.
  T* buffer(StepBuffer b) const {
    switch (b) {
      case StepBuffer::Residual:
        return residual_;
      case StepBuffer::Normed:
        return normed_;
      case StepBuffer::Proj:
        return spare_;
      default:
        fail("the CUDA forward pass has no step buffer ", static_cast<int>(b), " for this use");
    }
  }

  // The buffers a product reads: those above, the attention output, and act(gate) * up.
  const void* input(StepBuffer b) const {
    switch (b) {
      case StepBuffer::Attn:
        return c_.buffers.attn;
      case StepBuffer::Hidden:
        return c_.buffers.gate_up;
      default:
        return buffer(b);
    }
  }

  const float* norm_weight(WeightRef weight) const {
    if (!is_norm_role(weight.role))
      fail("the CUDA backend's norm got ", weight_role_name(weight.role), ", not a norm");
    return c_.weights.vector(weight);
  }

  const ForwardContext& c_;
  const ModelConfig& cfg_;
  const DeviceBatch& batch_;
  const ForwardShape& shape_;
  T* residual_;  // the residual stream
  T* spare_;     // the latest projection, waiting for its residual add
  T* normed_;
  cudaDataType ab_type_;
  int rope_layer_ = -1;
  std::optional<kernels::Q8Rows> normed_q8_;  // Normed quantized by its norm, while it holds
  std::optional<kernels::Q8Rows> hidden_q8_;  // Hidden quantized by its gated activation
  std::vector<int64_t> state_offset_;         // [layer] a DeltaNet layer's state within a slot
};

}  // namespace

void enqueue_forward(const ForwardContext& context, const DeviceBatch& batch,
                     const ForwardShape& shape) {
  assert(context.config.num_layers >= 1 && shape.num_tokens >= 1);  // validated config, a step
  visit_activation_type(context.dtype, [&](auto tag) {
    CudaForwardOps<typename decltype(tag)::type> ops(context, batch, shape);
    run_forward(context.config, ops);
  });
}

}  // namespace sluice
