#include "engine/backend/cpu_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <new>

#include "engine/backend/cpu_attention.h"
#include "engine/backend/cpu_gemm.h"
#include "engine/backend/cpu_ops.h"
#include "engine/backend/cpu_quant_dot.h"
#include "engine/backend/rope.h"
#include "engine/core/error.h"
#include "engine/model/forward_pass.h"

namespace sluice {

struct CpuBackend::Layer {
  // Norm weights with the model's offset applied (Gemma's 1 + w); empty when the layer has none.
  std::vector<float> attn_norm, ffn_norm, q_norm, k_norm, post_attn_norm, post_ffn_norm;
  std::vector<float> bq, bk, bv;
  CpuMatrix wq, wk, wv, wo, w_gate, w_up, w_down;
  std::vector<double> rope_inv_freq;  // this layer's RoPE frequencies (one per rotated pair)
};

// Activations of one step, grown to the largest step seen.
struct CpuBackend::Scratch {
  std::vector<float> x, xn, q, k, v, attn, proj, hidden, up, final_rows;

  size_t bytes() const {
    size_t n = 0;
    for (const auto* b : {&x, &xn, &q, &k, &v, &attn, &proj, &hidden, &up, &final_rows})
      n += b->capacity();
    return n * sizeof(float);
  }
};

namespace {

size_t default_widen_budget() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return size_t{4} << 30;
  return static_cast<size_t>(pages) * static_cast<size_t>(page_size) / 4;
}

// The fp32 copy widening would make: none for F32 and for quantized weights (never widened).
size_t widened_bytes(const WeightTensor& w) {
  if (gemm_multiplies_in_place(w.dtype) || has_quant_kernels(w.dtype)) return 0;
  return static_cast<size_t>(w.num_elements()) * sizeof(float);
}

template <typename T>
void resize_scratch(std::vector<T>& buffer, int64_t n) {
  if (buffer.size() < static_cast<size_t>(n)) buffer.resize(static_cast<size_t>(n));
}

}  // namespace

CpuBackend::CpuBackend(const Model& model, const CpuBackendOptions& options)
    : model_(model),
      config_(model.config),
      pool_(options.num_threads),
      scratch_(std::make_unique<Scratch>()) {
  const ModelWeights& w = model.weights;
  size_t total_widened = 0;
  for (const auto& l : w.layers) {
    for (const auto* t : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down})
      total_widened += widened_bytes(*t);
  }
  total_widened += widened_bytes(w.lm_head);
  const size_t budget =
      options.widen_budget_set ? options.widen_budget_bytes : default_widen_budget();
  const bool widen_now = total_widened <= budget;

  const float offset = config_.norm_weight_offset;
  auto norm_weights = [offset](const WeightTensor& t) {
    if (t.empty()) return std::vector<float>();
    std::vector<float> out = widen_vector(t);
    for (float& x : out) x += offset;
    return out;
  };
  layers_.resize(w.layers.size());
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const LayerWeights& src = w.layers[i];
    Layer& dst = layers_[i];
    dst.attn_norm = norm_weights(src.attn_norm);
    dst.ffn_norm = norm_weights(src.ffn_norm);
    dst.q_norm = norm_weights(src.q_norm);
    dst.k_norm = norm_weights(src.k_norm);
    dst.post_attn_norm = norm_weights(src.post_attn_norm);
    dst.post_ffn_norm = norm_weights(src.post_ffn_norm);
    if (!src.bq.empty()) {
      dst.bq = widen_vector(src.bq);
      dst.bk = widen_vector(src.bk);
      dst.bv = widen_vector(src.bv);
    }
    dst.wq = CpuMatrix(src.wq, widen_now, pool_);
    dst.wk = CpuMatrix(src.wk, widen_now, pool_);
    dst.wv = CpuMatrix(src.wv, widen_now, pool_);
    dst.wo = CpuMatrix(src.wo, widen_now, pool_);
    dst.w_gate = CpuMatrix(src.w_gate, widen_now, pool_);
    dst.w_up = CpuMatrix(src.w_up, widen_now, pool_);
    dst.w_down = CpuMatrix(src.w_down, widen_now, pool_);
    for (const auto* m :
         {&dst.wq, &dst.wk, &dst.wv, &dst.wo, &dst.w_gate, &dst.w_up, &dst.w_down}) {
      owned_weight_bytes_ += m->owned_bytes();
    }
    dst.rope_inv_freq = rope_inverse_frequencies(config_, static_cast<int>(i), w.rope_freq_factors);
  }
  embedding_ = CpuMatrix(w.token_embedding, false, pool_);  // rows are widened on lookup
  lm_head_ = CpuMatrix(w.lm_head, widen_now, pool_);
  owned_weight_bytes_ += lm_head_.owned_bytes();
  final_norm_ = norm_weights(w.final_norm);
}

CpuBackend::~CpuBackend() = default;

size_t CpuBackend::kv_block_bytes(int block_size) const {
  return 2 * static_cast<size_t>(config_.num_layers) * static_cast<size_t>(block_size) *
         static_cast<size_t>(config_.kv_size()) * sizeof(float);
}

void CpuBackend::allocate_kv_cache(int num_blocks, int block_size) {
  if (num_blocks <= 0 || block_size <= 0)
    fail("KV cache: need at least one block of at least one token");
  const size_t per_cache = static_cast<size_t>(config_.num_layers) *
                           static_cast<size_t>(num_blocks) * static_cast<size_t>(block_size) *
                           static_cast<size_t>(config_.kv_size());
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
    for (int l = 0; l < config_.num_layers; ++l) {
      const size_t base = static_cast<size_t>(l) * layer_floats;
      const size_t src = base + static_cast<size_t>(src_block_ids[i]) * block_floats;
      const size_t dst = base + static_cast<size_t>(dst_block_ids[i]) * block_floats;
      std::memcpy(&k_cache_[dst], &k_cache_[src], block_floats * sizeof(float));
      std::memcpy(&v_cache_[dst], &v_cache_[src], block_floats * sizeof(float));
    }
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
    const Layer& layer = b_.layers_[static_cast<size_t>(l)];
    layer.wq.multiply(s_.xn.data(), T_, s_.q.data(), b_.pool_);
    layer.wk.multiply(s_.xn.data(), T_, s_.k.data(), b_.pool_);
    layer.wv.multiply(s_.xn.data(), T_, s_.v.data(), b_.pool_);
    if (!layer.bq.empty()) {
      add_bias(s_.q.data(), layer.bq.data(), T_, c_.q_size());
      add_bias(s_.k.data(), layer.bk.data(), T_, c_.kv_size());
      add_bias(s_.v.data(), layer.bv.data(), T_, c_.kv_size());
    }
  }

  void head_norms(int l) override {
    const Layer& layer = b_.layers_[static_cast<size_t>(l)];
    rms_norm(s_.q.data(), layer.q_norm.data(), c_.rms_norm_eps, T_ * c_.num_heads, c_.head_dim,
             s_.q.data());
    rms_norm(s_.k.data(), layer.k_norm.data(), c_.rms_norm_eps, T_ * c_.num_kv_heads, c_.head_dim,
             s_.k.data());
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
    float* k_cache = b_.k_cache_.data() + static_cast<size_t>(l) * layer_floats;
    float* v_cache = b_.v_cache_.data() + static_cast<size_t>(l) * layer_floats;
    write_kv_cache(in_, shape, s_.k.data(), s_.v.data(), k_cache, v_cache);
    paged_attention(in_, shape, options, s_.q.data(), k_cache, v_cache, s_.attn.data(), b_.pool_);
  }

  void linear(StepBuffer x, WeightRef weight, StepBuffer out) override {
    const Layer& layer = b_.layers_[static_cast<size_t>(weight.layer)];
    const CpuMatrix& m = weight.role == WeightRole::Wo ? layer.wo : layer.w_down;
    assert(weight.role == WeightRole::Wo || weight.role == WeightRole::Down);
    m.multiply(buffer(x), T_, buffer(out), b_.pool_);
  }

  void gated_ffn(int l, Activation activation) override {
    const Layer& layer = b_.layers_[static_cast<size_t>(l)];
    layer.w_gate.multiply(s_.xn.data(), T_, s_.hidden.data(), b_.pool_);
    layer.w_up.multiply(s_.xn.data(), T_, s_.up.data(), b_.pool_);
    const int64_t n = T_ * c_.intermediate_size;
    if (activation == Activation::GeluTanh) {
      gelu_tanh_mul(s_.hidden.data(), s_.up.data(), n);
    } else {
      silu_mul(s_.hidden.data(), s_.up.data(), n);
    }
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

  const std::vector<float>& norm_weight(WeightRef w) const {
    if (w.role == WeightRole::FinalNorm) return b_.final_norm_;
    const Layer& layer = b_.layers_[static_cast<size_t>(w.layer)];
    switch (w.role) {
      case WeightRole::AttnNorm:
        return layer.attn_norm;
      case WeightRole::FfnNorm:
        return layer.ffn_norm;
      case WeightRole::PostAttnNorm:
        return layer.post_attn_norm;
      case WeightRole::PostFfnNorm:
        return layer.post_ffn_norm;
      default:
        fail("the CPU backend has no norm ", weight_role_name(w.role));
    }
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
                                    .kv_window = config_.kv_window()});
  Ops ops(*this, inputs, logits);
  run_forward(config_, ops);
}

std::string CpuBackend::describe() const {
  return str_cat("CPU, fp32 compute over the stored weights (", model_.weight_dtypes(), ")");
}

BackendMemory CpuBackend::memory() const {
  BackendMemory m;
  m.weight_bytes = model_.weight_bytes() + owned_weight_bytes_;
  m.kv_cache_bytes = (k_cache_.size() + v_cache_.size()) * sizeof(float);
  m.activation_bytes = scratch_->bytes();
  return m;
}

}  // namespace sluice
