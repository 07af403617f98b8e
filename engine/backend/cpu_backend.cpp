#include "engine/backend/cpu_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "engine/backend/cpu_attention.h"
#include "engine/backend/cpu_gemm.h"
#include "engine/backend/cpu_ops.h"
#include "engine/backend/rope.h"
#include "engine/core/error.h"

namespace sluice {

struct CpuBackend::Layer {
  std::vector<float> attn_norm, ffn_norm, bq, bk, bv;
  CpuMatrix wq, wk, wv, wo, w_gate, w_up, w_down;
};

// Activations of one step, grown to the largest step seen.
struct CpuBackend::Scratch {
  std::vector<float> x, xn, q, k, v, attn, proj, gate, up, final_rows;

  size_t bytes() const {
    size_t n = 0;
    for (const auto* b : {&x, &xn, &q, &k, &v, &attn, &proj, &gate, &up, &final_rows})
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

size_t widened_bytes(const WeightTensor& w) {
  return gemm_multiplies_in_place(w.dtype) ? 0
                                           : static_cast<size_t>(w.num_elements()) * sizeof(float);
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

  layers_.resize(w.layers.size());
  for (size_t i = 0; i < w.layers.size(); ++i) {
    const LayerWeights& src = w.layers[i];
    Layer& dst = layers_[i];
    dst.attn_norm = widen_vector(src.attn_norm);
    dst.ffn_norm = widen_vector(src.ffn_norm);
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
  }
  embedding_ = CpuMatrix(w.token_embedding, false, pool_);  // rows are widened on lookup
  lm_head_ = CpuMatrix(w.lm_head, widen_now, pool_);
  owned_weight_bytes_ += lm_head_.owned_bytes();
  final_norm_ = widen_vector(w.final_norm);
  rope_inv_freq_ = rope_inverse_frequencies(config_, w.rope_freq_factors);
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

void CpuBackend::check_inputs(const BatchInputs& in) const {
  if (num_blocks_ == 0) fail("forward pass before the KV cache was allocated");
  const int64_t num_slots = static_cast<int64_t>(num_blocks_) * block_size_;
  for (int t = 0; t < in.num_tokens(); ++t) {
    const int32_t id = in.token_ids[static_cast<size_t>(t)];
    if (id < 0 || id >= config_.vocab_size)
      fail("token id ", id, " is outside the vocabulary (", config_.vocab_size, ")");
    const int64_t slot = in.slot_mapping[static_cast<size_t>(t)];
    if (slot < 0 || slot >= num_slots)
      fail("KV slot ", slot, " is outside the pool (", num_slots, " slots)");
    if (in.positions[static_cast<size_t>(t)] >= config_.max_position_embeddings) {
      fail("position ", in.positions[static_cast<size_t>(t)], " is past the model's context (",
           config_.max_position_embeddings, ")");
    }
  }
  for (const int32_t block : in.block_tables) {
    if (block >= num_blocks_)
      fail("block id ", block, " is outside the pool (", num_blocks_, " blocks)");
  }
}

void CpuBackend::forward(const BatchInputs& inputs, std::vector<float>& logits) {
  check_inputs(inputs);
  const int64_t T = inputs.num_tokens();
  Scratch& s = *scratch_;
  resize_scratch(s.x, T * config_.hidden_size);
  resize_scratch(s.xn, T * config_.hidden_size);
  resize_scratch(s.q, T * config_.q_size());
  resize_scratch(s.attn, T * config_.q_size());
  resize_scratch(s.k, T * config_.kv_size());
  resize_scratch(s.v, T * config_.kv_size());
  resize_scratch(s.proj, T * config_.hidden_size);
  resize_scratch(s.gate, T * config_.intermediate_size);
  resize_scratch(s.up, T * config_.intermediate_size);
  for (int64_t t = 0; t < T; ++t)
    embedding_.row(inputs.token_ids[static_cast<size_t>(t)], s.x.data() + t * config_.hidden_size);
  for (int l = 0; l < config_.num_layers; ++l) run_layer(l, inputs);
  compute_logits(inputs, logits);
}

void CpuBackend::run_layer(int layer_idx, const BatchInputs& inputs) {
  const Layer& layer = layers_[static_cast<size_t>(layer_idx)];
  Scratch& s = *scratch_;
  const int64_t T = inputs.num_tokens();
  const int64_t hidden = config_.hidden_size;

  rms_norm(s.x.data(), layer.attn_norm.data(), config_.rms_norm_eps, T, hidden, s.xn.data());
  layer.wq.multiply(s.xn.data(), T, s.q.data(), pool_);
  layer.wk.multiply(s.xn.data(), T, s.k.data(), pool_);
  layer.wv.multiply(s.xn.data(), T, s.v.data(), pool_);
  if (!layer.bq.empty()) {
    add_bias(s.q.data(), layer.bq.data(), T, config_.q_size());
    add_bias(s.k.data(), layer.bk.data(), T, config_.kv_size());
    add_bias(s.v.data(), layer.bv.data(), T, config_.kv_size());
  }
  apply_rope(s.q.data(), s.k.data(), inputs.positions.data(), T, config_.num_heads,
             config_.num_kv_heads, config_.head_dim, config_.rope_layout, rope_inv_freq_, pool_);

  const AttentionShape shape{config_.num_heads, config_.num_kv_heads, config_.head_dim,
                             block_size_};
  const size_t layer_floats = static_cast<size_t>(num_blocks_) * static_cast<size_t>(block_size_) *
                              static_cast<size_t>(config_.kv_size());
  float* k_cache = k_cache_.data() + static_cast<size_t>(layer_idx) * layer_floats;
  float* v_cache = v_cache_.data() + static_cast<size_t>(layer_idx) * layer_floats;
  write_kv_cache(inputs, shape, s.k.data(), s.v.data(), k_cache, v_cache);
  paged_attention(inputs, shape, s.q.data(), k_cache, v_cache, s.attn.data(), pool_);

  layer.wo.multiply(s.attn.data(), T, s.proj.data(), pool_);
  for (int64_t i = 0; i < T * hidden; ++i)
    s.x[static_cast<size_t>(i)] += s.proj[static_cast<size_t>(i)];

  rms_norm(s.x.data(), layer.ffn_norm.data(), config_.rms_norm_eps, T, hidden, s.xn.data());
  layer.w_gate.multiply(s.xn.data(), T, s.gate.data(), pool_);
  layer.w_up.multiply(s.xn.data(), T, s.up.data(), pool_);
  silu_mul(s.gate.data(), s.up.data(), T * config_.intermediate_size);
  layer.w_down.multiply(s.gate.data(), T, s.proj.data(), pool_);
  for (int64_t i = 0; i < T * hidden; ++i)
    s.x[static_cast<size_t>(i)] += s.proj[static_cast<size_t>(i)];
}

void CpuBackend::compute_logits(const BatchInputs& inputs, std::vector<float>& logits) {
  Scratch& s = *scratch_;
  const int64_t hidden = config_.hidden_size;
  const auto num_rows = static_cast<int64_t>(inputs.logits_indices.size());
  resize_scratch(s.final_rows, num_rows * hidden);
  for (int64_t r = 0; r < num_rows; ++r) {
    const int32_t t = inputs.logits_indices[static_cast<size_t>(r)];
    std::memcpy(s.final_rows.data() + r * hidden, s.x.data() + t * hidden,
                sizeof(float) * static_cast<size_t>(hidden));
  }
  rms_norm(s.final_rows.data(), final_norm_.data(), config_.rms_norm_eps, num_rows, hidden,
           s.final_rows.data());
  logits.resize(static_cast<size_t>(num_rows * config_.vocab_size));
  if (num_rows > 0) lm_head_.multiply(s.final_rows.data(), num_rows, logits.data(), pool_);
}

BackendMemory CpuBackend::memory() const {
  BackendMemory m;
  m.weight_bytes = model_.weight_bytes() + owned_weight_bytes_;
  m.kv_cache_bytes = (k_cache_.size() + v_cache_.size()) * sizeof(float);
  m.activation_bytes = scratch_->bytes();
  return m;
}

}  // namespace sluice
