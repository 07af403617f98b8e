#include "engine/backend/cpu/cpu_backend.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <new>

#include "engine/backend/cpu/cpu_attention.h"
#include "engine/backend/cpu/cpu_deltanet.h"
#include "engine/backend/cpu/cpu_gemm.h"
#include "engine/backend/cpu/cpu_ops.h"
#include "engine/backend/cpu/cpu_quant_dot.h"
#include "engine/backend/rope.h"
#include "engine/core/error.h"
#include "engine/model/forward_pass.h"

namespace sluice {

struct CpuBackend::Layer {
  // [role] the layer's matrices; empty for the roles the model lacks.
  LayerRoleArray<CpuMatrix> matrices;
  // [role] its norm weights with the model's offset applied (Gemma's 1 + w) and its biases, in
  // fp32; empty for the roles the model lacks.
  LayerRoleArray<std::vector<float>> vectors;
  std::vector<double> rope_inv_freq;  // this layer's RoPE frequencies (one per rotated pair)
  CpuExperts experts;                 // the router and experts of a mixture-of-experts layer
};

// Activations of one step, grown to the largest step seen.
struct CpuBackend::Scratch {
  // q_gated: a gated attention layer's q projection ([q | gate] per head); gate: its gate halves;
  // shared: the shared expert's output.
  std::vector<float> x, xn, q, k, v, attn, proj, hidden, up, final_rows, q_gated, gate, shared;
  MoeScratch moe;
  DeltaNetScratch deltanet;

  size_t bytes() const {
    size_t n = 0;
    for (const auto* b :
         {&x, &xn, &q, &k, &v, &attn, &proj, &hidden, &up, &final_rows, &q_gated, &gate, &shared})
      n += b->capacity();
    return n * sizeof(float) + moe.bytes() + deltanet.bytes();
  }
};

namespace {

template <typename T>
void resize_scratch(std::vector<T>& buffer, int64_t n) {
  if (buffer.size() < static_cast<size_t>(n)) buffer.resize(static_cast<size_t>(n));
}

}  // namespace

CpuBackend::CpuBackend(const Model& model, const CpuBackendOptions& options)
    : model_(model),
      config_(model.config),
      pool_(options.num_threads),
      round_kv_to_fp8_(options.round_kv_to_fp8),
      on_experts_chosen_(options.on_experts_chosen),
      scratch_(std::make_unique<Scratch>()) {
  const ModelWeights& w = model.weights;
  layers_.resize(w.layers.size());
  for (size_t i = 0; i < w.layers.size(); ++i) {
    for (const WeightRole role : all_weight_roles()) {
      if (is_layer_role(role)) prepare(role, w.layers[i][role], layers_[i]);
    }
    if (i < w.experts.size()) prepare_experts(w.experts[i], layers_[i]);
    layers_[i].rope_inv_freq =
        rope_inverse_frequencies(config_, static_cast<int>(i), w.rope_freq_factors);
  }
  kv_layer_.assign(w.layers.size(), -1);
  state_layer_.assign(w.layers.size(), -1);
  int num_state_layers = 0;
  for (int l = 0; l < config_.num_layers; ++l) {
    if (config_.is_deltanet_layer(l)) {
      state_layer_[static_cast<size_t>(l)] = num_state_layers++;
    } else {
      kv_layer_[static_cast<size_t>(l)] = num_kv_layers_++;
    }
  }
  embedding_ = CpuMatrix(w.token_embedding);  // rows are widened on lookup
  lm_head_ = CpuMatrix(w.lm_head, /*interleave=*/true, &pool_);
  owned_weight_bytes_ += lm_head_.owned_bytes();
  replaced_map_bytes_ += lm_head_.replaced_map_bytes();
  final_norm_ = norm_weights(w.final_norm);
}

void CpuBackend::prepare(WeightRole role, const WeightTensor& tensor, Layer& layer) {
  if (tensor.empty()) return;
  switch (weight_kind(role)) {
    case WeightKind::Matrix:
      layer.matrices[role] = CpuMatrix(tensor, /*interleave=*/true, &pool_);
      owned_weight_bytes_ += layer.matrices[role].owned_bytes();
      replaced_map_bytes_ += layer.matrices[role].replaced_map_bytes();
      return;
    case WeightKind::Norm:
      layer.vectors[role] = norm_weights(tensor);
      return;
    case WeightKind::Bias:
      layer.vectors[role] = widen_vector(tensor);
      return;
    case WeightKind::ExpertMatrices:
    case WeightKind::ExpertBiases:
      fail("weight ", tensor.name, ": an expert stack is not a tensor of one layer role");
  }
}

void CpuBackend::prepare_experts(const LayerExperts& stacks, Layer& layer) {
  using enum WeightRole;
  if (!config_.is_moe()) return;
  CpuExperts& e = layer.experts;
  e.router = std::move(layer.matrices[Router]);
  e.router_bias = std::move(layer.vectors[RouterBias]);
  auto matrices = [&](WeightRole role, std::vector<CpuMatrix>& out) {
    for (const WeightTensor& t : stacks[role]) {
      out.emplace_back(t);
      owned_weight_bytes_ += out.back().owned_bytes();
    }
  };
  auto biases = [&](WeightRole role, std::vector<std::vector<float>>& out) {
    for (const WeightTensor& t : stacks[role]) out.push_back(widen_vector(t));
  };
  matrices(GateExps, e.gate);
  matrices(UpExps, e.up);
  matrices(DownExps, e.down);
  biases(GateExpsBias, e.gate_bias);
  biases(UpExpsBias, e.up_bias);
  biases(DownExpsBias, e.down_bias);
}

std::vector<float> CpuBackend::norm_weights(const WeightTensor& tensor) const {
  std::vector<float> out = widen_vector(tensor);
  for (float& x : out) x += config_.norm_weight_offset;
  return out;
}

CpuBackend::~CpuBackend() = default;

size_t CpuBackend::kv_block_bytes(int block_size) const {
  return 2 * static_cast<size_t>(num_kv_layers_) * static_cast<size_t>(block_size) *
         static_cast<size_t>(config_.kv_size()) * sizeof(float);
}

void CpuBackend::allocate_kv_cache(int num_blocks, int block_size) {
  if (num_blocks <= 0 || block_size <= 0)
    fail("KV cache: need at least one block of at least one token");
  const size_t per_cache = static_cast<size_t>(num_kv_layers_) * static_cast<size_t>(num_blocks) *
                           static_cast<size_t>(block_size) * static_cast<size_t>(config_.kv_size());
  k_cache_.clear();
  v_cache_.clear();
  try {
    k_cache_.assign(per_cache, 0.0f);
    v_cache_.assign(per_cache, 0.0f);
  } catch (const std::bad_alloc&) {
    k_cache_ = {};
    v_cache_ = {};
    fail("KV cache: cannot allocate ", 2 * per_cache * sizeof(float) >> 20,
         " MiB of host memory for ", num_blocks, " blocks; lower --kv-cache-bytes or --kv-blocks");
  }
  num_blocks_ = num_blocks;
  block_size_ = block_size;
}

void CpuBackend::copy_blocks(std::span<const int32_t> src_block_ids,
                             std::span<const int32_t> dst_block_ids) {
  const size_t block_floats =
      static_cast<size_t>(block_size_) * static_cast<size_t>(config_.kv_size());
  const size_t layer_floats = block_floats * static_cast<size_t>(num_blocks_);
  for (size_t i = 0; i < src_block_ids.size(); ++i) {
    for (int l = 0; l < num_kv_layers_; ++l) {
      const size_t base = static_cast<size_t>(l) * layer_floats;
      const size_t src = base + static_cast<size_t>(src_block_ids[i]) * block_floats;
      const size_t dst = base + static_cast<size_t>(dst_block_ids[i]) * block_floats;
      std::memcpy(&k_cache_[dst], &k_cache_[src], block_floats * sizeof(float));
      std::memcpy(&v_cache_[dst], &v_cache_[src], block_floats * sizeof(float));
    }
  }
}

size_t CpuBackend::state_slot_bytes() const {
  return static_cast<size_t>(config_.state_floats()) * sizeof(float);
}

void CpuBackend::allocate_state_slots(int num_slots) {
  if (num_slots < 0) fail("state slots: a negative count (", num_slots, ")");
  if (num_slots > 0 && !config_.is_hybrid())
    fail("state slots: ", config_.architecture, " has no recurrent layers");
  const size_t floats =
      static_cast<size_t>(num_slots) * static_cast<size_t>(config_.state_floats());
  states_.clear();
  try {
    states_.assign(floats, 0.0f);
  } catch (const std::bad_alloc&) {
    states_ = {};
    num_state_slots_ = 0;
    fail("state slots: cannot allocate ", floats * sizeof(float) >> 20, " MiB of host memory for ",
         num_slots, " slots of ", state_slot_bytes() >> 10, " KiB; lower --max-num-seqs");
  }
  num_state_slots_ = num_slots;
}

void CpuBackend::copy_state_slots(std::span<const int32_t> src_slots,
                                  std::span<const int32_t> dst_slots) {
  if (src_slots.size() != dst_slots.size())
    fail("copy_state_slots: ", src_slots.size(), " sources for ", dst_slots.size(), " targets");
  const auto floats = static_cast<size_t>(config_.state_floats());
  for (size_t i = 0; i < src_slots.size(); ++i) {
    for (const int32_t slot : {src_slots[i], dst_slots[i]}) {
      if (slot < 0 || slot >= num_state_slots_)
        fail("copy_state_slots: slot ", slot, " is outside the ", num_state_slots_, " slots");
    }
    if (src_slots[i] == dst_slots[i]) continue;
    std::memcpy(&states_[static_cast<size_t>(dst_slots[i]) * floats],
                &states_[static_cast<size_t>(src_slots[i]) * floats], floats * sizeof(float));
  }
}

// The primitives of the forward pass over this backend's buffers, for one step.
class CpuBackend::Ops final : public ForwardOps {
 public:
  Ops(CpuBackend& backend, const BatchInputs& inputs, std::vector<float>& logits)
      : b_(backend),
        c_(backend.config_),
        s_(*backend.scratch_),
        in_(inputs),
        logits_(logits),
        T_(inputs.num_tokens()) {
    resize_scratch(s_.x, T_ * c_.hidden_size);
    resize_scratch(s_.xn, T_ * c_.hidden_size);
    resize_scratch(s_.q, T_ * c_.q_size());
    resize_scratch(s_.attn, T_ * c_.q_size());
    resize_scratch(s_.k, T_ * c_.kv_size());
    resize_scratch(s_.v, T_ * c_.kv_size());
    resize_scratch(s_.proj, T_ * c_.hidden_size);
    resize_scratch(s_.hidden, T_ * c_.intermediate_size);
    resize_scratch(s_.up, T_ * c_.intermediate_size);
  }

  void embed(float scale) override {
    const int64_t hidden = c_.hidden_size;
    for (int64_t t = 0; t < T_; ++t) {
      float* row = s_.x.data() + t * hidden;
      b_.embedding_.row(in_.token_ids[static_cast<size_t>(t)], row);
      if (scale != 1.0f) {
        for (int64_t i = 0; i < hidden; ++i) row[i] *= scale;
      }
    }
  }

  void norm(StepBuffer x, StepBuffer out, WeightRef weight) override {
    rms_norm(buffer(x), norm_weight(weight).data(), c_.rms_norm_eps, T_, c_.hidden_size,
             buffer(out));
  }

  void add_and_norm(StepBuffer pending, WeightRef weight) override {
    const float* p = buffer(pending);
    for (int64_t i = 0; i < T_ * c_.hidden_size; ++i) s_.x[static_cast<size_t>(i)] += p[i];
    norm(StepBuffer::Residual, StepBuffer::Normed, weight);
  }

  void qkv_projection(int l) override {
    using enum WeightRole;
    // One group for the projections that read the same normed rows: their activations are
    // quantized once per weight type, and the pool wakes twice instead of twice per matrix (the
    // k and v matrices of a decode step are too small to pay for their own loops).
    if (c_.attn_output_gate) split_gated_q(l);
    const float* xn = s_.xn.data();
    const MatrixProduct q{&matrix({Wq, l}), xn, T_, s_.q.data()};
    const MatrixProduct k{&matrix({Wk, l}), xn, T_, s_.k.data(), c_.attn_output_gate ? -1 : 0};
    const MatrixProduct v{&matrix({Wv, l}), xn, T_, s_.v.data(), c_.attn_output_gate ? 0 : 1};
    const std::array<MatrixProduct, 3> products{q, k, v};
    multiply_all(std::span(products).subspan(c_.attn_output_gate ? 1 : 0), b_.pool_);
    if (b_.layers_[static_cast<size_t>(l)].vectors[Bq].empty()) return;
    sluice::add_bias(s_.q.data(), vector({Bq, l}).data(), T_, c_.q_size());
    sluice::add_bias(s_.k.data(), vector({Bk, l}).data(), T_, c_.kv_size());
    sluice::add_bias(s_.v.data(), vector({Bv, l}).data(), T_, c_.kv_size());
  }

  void attention_output_gate(int) override {
    const int64_t n = T_ * c_.q_size();
    for (int64_t i = 0; i < n; ++i)
      s_.attn[static_cast<size_t>(i)] /= 1.0f + std::exp(-s_.gate[static_cast<size_t>(i)]);
  }

  void gated_delta_net(int l) override {
    using enum WeightRole;
    const CpuDeltaNetWeights w{.qkv = &matrix({SsmQkv, l}),
                               .z = &matrix({SsmZ, l}),
                               .beta = &matrix({SsmBeta, l}),
                               .alpha = &matrix({SsmAlpha, l}),
                               .out = &matrix({SsmOut, l}),
                               .conv = vector({SsmConv, l}).data(),
                               .a = vector({SsmA, l}).data(),
                               .dt = vector({SsmDt, l}).data(),
                               .norm = vector({SsmNorm, l}).data()};
    const int64_t slot_floats = c_.state_floats();
    const CpuStateView state{.base = b_.states_.data() + b_.state_layer_[static_cast<size_t>(l)] *
                                                             c_.deltanet.state_floats(),
                             .slot_stride = slot_floats};
    sluice::gated_delta_net(c_.deltanet, c_.rms_norm_eps, w, in_, s_.xn.data(), state,
                            s_.proj.data(), b_.pool_, s_.deltanet);
  }

  void head_norms(int l) override {
    rms_norm(s_.q.data(), norm_weight({WeightRole::QNorm, l}).data(), c_.rms_norm_eps,
             T_ * c_.num_heads, c_.head_dim, s_.q.data());
    rms_norm(s_.k.data(), norm_weight({WeightRole::KNorm, l}).data(), c_.rms_norm_eps,
             T_ * c_.num_kv_heads, c_.head_dim, s_.k.data());
  }

  void rope(int l) override {
    apply_rope(s_.q.data(), s_.k.data(), in_.positions.data(), T_, c_.num_heads, c_.num_kv_heads,
               c_.head_dim, c_.rope_layout, b_.layers_[static_cast<size_t>(l)].rope_inv_freq,
               b_.pool_);
  }

  void attention(int l, const AttentionOptions& options) override {
    const AttentionShape shape{c_.num_heads, c_.num_kv_heads, c_.head_dim, b_.block_size_};
    const size_t layer_floats = static_cast<size_t>(b_.num_blocks_) *
                                static_cast<size_t>(b_.block_size_) *
                                static_cast<size_t>(c_.kv_size());
    const auto kv_layer = static_cast<size_t>(b_.kv_layer_[static_cast<size_t>(l)]);
    float* k_cache = b_.k_cache_.data() + kv_layer * layer_floats;
    float* v_cache = b_.v_cache_.data() + kv_layer * layer_floats;
    if (b_.round_kv_to_fp8_) {
      const int64_t rows = T_ * c_.num_kv_heads;
      round_rows_to_fp8(s_.k.data(), rows, c_.head_dim);
      round_rows_to_fp8(s_.v.data(), rows, c_.head_dim);
    }
    write_kv_cache(in_, shape, s_.k.data(), s_.v.data(), k_cache, v_cache);
    const float* sinks = options.sinks ? vector({WeightRole::Sinks, l}).data() : nullptr;
    paged_attention(in_, shape, options, s_.q.data(), k_cache, v_cache, s_.attn.data(), b_.pool_,
                    sinks);
  }

  void add_bias(StepBuffer x, WeightRef bias) override {
    sluice::add_bias(buffer(x), vector(bias).data(), T_, static_cast<int64_t>(vector(bias).size()));
  }

  void linear(StepBuffer x, WeightRef weight, StepBuffer out) override {
    matrix(weight).multiply(buffer(x), T_, buffer(out), b_.pool_);
  }

  void gated_ffn(int l, Activation activation) override {
    // Gate and up in one group, as the q, k and v projections.
    const std::array<MatrixProduct, 2> products{
        MatrixProduct{&matrix({WeightRole::Gate, l}), s_.xn.data(), T_, s_.hidden.data()},
        MatrixProduct{&matrix({WeightRole::Up, l}), s_.xn.data(), T_, s_.up.data(), 0}};
    multiply_all(products, b_.pool_);
    gated_activation(activation, s_.hidden.data(), s_.up.data(), T_ * c_.intermediate_size);
  }

  void moe_ffn(int l, const MoeOptions& options) override {
    sluice::moe_ffn(b_.layers_[static_cast<size_t>(l)].experts, options, s_.xn.data(), T_,
                    c_.hidden_size, s_.proj.data(), b_.pool_, s_.moe);
    if (b_.on_experts_chosen_) {
      b_.on_experts_chosen_(l, std::span<const int32_t>(s_.moe.choice.ids.data(),
                                                        static_cast<size_t>(T_ * options.top_k)));
    }
    if (options.shared_expert) add_shared_expert(l);
  }

  void logits(StepBuffer pending, float softcap) override {
    const int64_t hidden = c_.hidden_size;
    const auto num_rows = static_cast<int64_t>(in_.logits_indices.size());
    resize_scratch(s_.final_rows, num_rows * hidden);
    const float* p = buffer(pending);
    for (int64_t r = 0; r < num_rows; ++r) {
      const int64_t t = in_.logits_indices[static_cast<size_t>(r)];
      float* row = s_.final_rows.data() + r * hidden;
      for (int64_t i = 0; i < hidden; ++i)
        row[i] = s_.x[static_cast<size_t>(t * hidden + i)] + p[t * hidden + i];
    }
    rms_norm(s_.final_rows.data(), b_.final_norm_.data(), c_.rms_norm_eps, num_rows, hidden,
             s_.final_rows.data());
    logits_.resize(static_cast<size_t>(num_rows * c_.vocab_size));
    if (num_rows == 0) return;
    b_.lm_head_.multiply(s_.final_rows.data(), num_rows, logits_.data(), b_.pool_);
    if (softcap > 0.0f) soft_cap(logits_.data(), num_rows * c_.vocab_size, softcap);
  }

 private:
  // Q and the gate from a gated attention layer's q projection ([q | gate] per head).
  void split_gated_q(int l) {
    const int64_t width = 2 * int64_t{c_.q_size()};
    resize_scratch(s_.q_gated, T_ * width);
    resize_scratch(s_.gate, T_ * c_.q_size());
    matrix({WeightRole::Wq, l}).multiply(s_.xn.data(), T_, s_.q_gated.data(), b_.pool_);
    const int64_t d = c_.head_dim;
    for (int64_t t = 0; t < T_; ++t) {
      for (int64_t h = 0; h < c_.num_heads; ++h) {
        const float* src = s_.q_gated.data() + t * width + h * 2 * d;
        const int64_t dst = (t * c_.num_heads + h) * d;
        std::memcpy(s_.q.data() + dst, src, static_cast<size_t>(d) * sizeof(float));
        std::memcpy(s_.gate.data() + dst, src + d, static_cast<size_t>(d) * sizeof(float));
      }
    }
  }

  // Proj += sigmoid(Normed . ShexpRouter^T) * SwiGLU_shared(Normed), after the routed experts.
  void add_shared_expert(int l) {
    using enum WeightRole;
    const int64_t ffn = c_.shared_expert_intermediate_size;
    const int64_t hidden = c_.hidden_size;
    resize_scratch(s_.hidden, T_ * ffn);
    resize_scratch(s_.up, T_ * ffn);
    resize_scratch(s_.shared, T_ * std::max<int64_t>(hidden, 1));
    resize_scratch(s_.final_rows, T_);
    matrix({ShexpGate, l}).multiply(s_.xn.data(), T_, s_.hidden.data(), b_.pool_);
    matrix({ShexpUp, l}).multiply(s_.xn.data(), T_, s_.up.data(), b_.pool_);
    silu_mul(s_.hidden.data(), s_.up.data(), T_ * ffn);
    matrix({ShexpDown, l}).multiply(s_.hidden.data(), T_, s_.shared.data(), b_.pool_);
    matrix({ShexpRouter, l}).multiply(s_.xn.data(), T_, s_.final_rows.data(), b_.pool_);
    for (int64_t t = 0; t < T_; ++t) {
      const float gate = 1.0f / (1.0f + std::exp(-s_.final_rows[static_cast<size_t>(t)]));
      for (int64_t i = 0; i < hidden; ++i)
        s_.proj[static_cast<size_t>(t * hidden + i)] +=
            gate * s_.shared[static_cast<size_t>(t * hidden + i)];
    }
  }

  float* buffer(StepBuffer b) {
    switch (b) {
      case StepBuffer::Residual:
        return s_.x.data();
      case StepBuffer::Normed:
        return s_.xn.data();
      case StepBuffer::Q:
        return s_.q.data();
      case StepBuffer::K:
        return s_.k.data();
      case StepBuffer::V:
        return s_.v.data();
      case StepBuffer::Attn:
        return s_.attn.data();
      case StepBuffer::Proj:
        return s_.proj.data();
      case StepBuffer::Hidden:
        return s_.hidden.data();
    }
    return nullptr;
  }

  // The layer's matrix of a role. Throws Error for a role the layer has no matrix of.
  const CpuMatrix& matrix(WeightRef w) const {
    const CpuMatrix& m = b_.layers_[static_cast<size_t>(w.layer)].matrices[w.role];
    if (m.empty())
      fail("the CPU backend has no matrix ", weight_role_name(w.role), " in layer ", w.layer);
    return m;
  }

  // The layer's norm weight or bias of a role. Throws Error for a role the layer has none of.
  const std::vector<float>& vector(WeightRef w) const {
    const std::vector<float>& v = b_.layers_[static_cast<size_t>(w.layer)].vectors[w.role];
    if (v.empty())
      fail("the CPU backend has no vector ", weight_role_name(w.role), " in layer ", w.layer);
    return v;
  }

  const std::vector<float>& norm_weight(WeightRef w) const {
    if (w.role == WeightRole::FinalNorm) return b_.final_norm_;
    if (!is_norm_role(w.role))
      fail("the CPU backend's norm got ", weight_role_name(w.role), ", not a norm");
    return vector(w);
  }

  CpuBackend& b_;
  const ModelConfig& c_;
  Scratch& s_;
  const BatchInputs& in_;
  std::vector<float>& logits_;
  const int64_t T_;
};

void CpuBackend::forward(const BatchInputs& inputs, std::vector<float>& logits) {
  validate_batch_inputs(inputs,
                        BatchLimits{.vocab_size = config_.vocab_size,
                                    .max_position_embeddings = config_.max_position_embeddings,
                                    .num_blocks = num_blocks_,
                                    .block_size = block_size_,
                                    .kv_window = config_.kv_window(),
                                    .num_state_slots = config_.is_hybrid() ? num_state_slots_ : 0});
  if (config_.is_hybrid() && num_state_slots_ == 0)
    fail("forward pass of a hybrid model before its state slots were allocated");
  Ops ops(*this, inputs, logits);
  run_forward(config_, ops);
}

std::string CpuBackend::describe() const {
  return str_cat("CPU, fp32 compute over the stored weights (", model_.weight_dtypes(), ")",
                 round_kv_to_fp8_ ? ", K and V rounded to FP8 E4M3" : "",
                 "; kernels: ", cpu_kernel_isa(), ", quantized ",
                 quant_kernel_isa_name(best_quant_kernel_isa()));
}

BackendMemory CpuBackend::memory() const {
  BackendMemory m;
  m.weight_bytes = model_.weight_bytes() + owned_weight_bytes_ - replaced_map_bytes_;
  m.kv_cache_bytes = (k_cache_.size() + v_cache_.size()) * sizeof(float);
  m.activation_bytes = scratch_->bytes();
  m.state_bytes = states_.size() * sizeof(float);
  return m;
}

}  // namespace sluice
