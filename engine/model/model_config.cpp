#include "engine/model/model_config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "engine/core/error.h"

namespace sluice {

namespace {

// ", SwiGLU" for describe().
const char* activation_clause(Activation activation) {
  switch (activation) {
    case Activation::Silu:
      return ", SwiGLU";
    case Activation::GeluTanh:
      return ", GeGLU";
    case Activation::SwigluOai:
      return ", clamped SwiGLU";
  }
  return "";
}

}  // namespace

int ModelConfig::num_attention_layers() const {
  if (layers.empty()) return num_layers;
  return static_cast<int>(std::count_if(layers.begin(), layers.end(), [](const LayerConfig& l) {
    return l.kind == LayerKind::Attention;
  }));
}

void ModelConfig::validate(const std::string& source, const ConfigKeys& keys) const {
  auto require_positive = [&](int value, const std::string& key) {
    if (value <= 0) fail(source, ": ", key, " must be positive (got ", value, ")");
  };
  require_positive(hidden_size, keys.hidden_size);
  require_positive(intermediate_size, keys.intermediate_size);
  require_positive(num_layers, keys.num_layers);
  require_positive(num_heads, keys.num_heads);
  require_positive(num_kv_heads, keys.num_kv_heads);
  require_positive(head_dim, keys.head_dim);
  require_positive(vocab_size, keys.vocab_size);
  require_positive(max_position_embeddings, keys.max_position_embeddings);
  if (num_layers > kMaxNumLayers) {
    fail(source, ": ", keys.num_layers, " is ", num_layers, ", more than the ", kMaxNumLayers,
         " layers Sluice accepts; the file is damaged or not a model it can run");
  }
  if (num_heads % num_kv_heads != 0) {
    fail(source, ": ", keys.num_heads, " (", num_heads, ") is not a multiple of ",
         keys.num_kv_heads, " (", num_kv_heads, ")");
  }
  // q_size() and kv_size() are ints, and every activation row is sized by them.
  if (int64_t{num_heads} * head_dim > std::numeric_limits<int32_t>::max()) {
    fail(source, ": ", keys.num_heads, " ", num_heads, " x ", keys.head_dim, " ", head_dim,
         " is out of range");
  }
  if (head_dim % 2 != 0)
    fail(source, ": ", keys.head_dim, " (", head_dim, ") must be even for RoPE");
  if (!(rms_norm_eps > 0.0f) || !std::isfinite(rms_norm_eps))
    fail(source, ": ", keys.rms_norm_eps, " must be positive");
  if (!(rope_theta > 0.0f) || !std::isfinite(rope_theta))
    fail(source, ": ", keys.rope_theta, " must be positive");
  if (rope_scaling.type != RopeScaling::Type::None && !(rope_scaling.factor > 0.0f)) {
    fail(source, ": rope_scaling factor must be positive");
  }
  if (rotary_dim < 0 || rotary_dim > head_dim || rotary_dim % 2 != 0)
    fail(source, ": the rotary dimensions (", rotary_dim, ") must be even and at most ",
         keys.head_dim, " (", head_dim, ")");
  if (rope_scaling.type == RopeScaling::Type::LongRope &&
      (rope_scaling.long_factor.size() != static_cast<size_t>(rope_dims() / 2) ||
       rope_scaling.short_factor.size() != static_cast<size_t>(rope_dims() / 2))) {
    fail(source, ": LongRoPE needs ", rope_dims() / 2,
         " short and long factors (one per rotated "
         "pair), not ",
         rope_scaling.short_factor.size(), " and ", rope_scaling.long_factor.size());
  }
  for (const auto& [value, what] : {std::pair{attention_scale, "the attention scale"},
                                    std::pair{attn_logit_softcap, "the attention logit soft-cap"},
                                    std::pair{final_logit_softcap, "the final logit soft-cap"},
                                    std::pair{embedding_scale, "the embedding scale"}}) {
    if (!(value >= 0.0f) || !std::isfinite(value))
      fail(source, ": ", what, " must be a finite number >= 0 (got ", value, ")");
  }
  if (sliding_window < 0) fail(source, ": the sliding window must not be negative");
  validate_experts(source, keys);
  if (layers.size() != static_cast<size_t>(num_layers))
    fail(source, ": per-layer options for ", layers.size(), " of ", num_layers, " layers");
  validate_deltanet(source);
  for (const LayerConfig& l : layers) {
    if (!(l.rope_theta > 0.0f) || !std::isfinite(l.rope_theta))
      fail(source, ": a layer's RoPE base must be positive");
  }
  // -1 means "none"; any other id must name a token.
  auto check_id = [&](int id, const std::string& key, bool may_be_none) {
    if ((id < 0 && !(may_be_none && id == -1)) || id >= vocab_size) {
      fail(source, ": ", key, " ", id, " is not a token id of the vocabulary (0 to ",
           vocab_size - 1, ")");
    }
  };
  check_id(bos_token_id, keys.bos_token_id, true);
  check_id(eos_token_id, keys.eos_token_id, true);
  for (const int id : extra_eos_token_ids) check_id(id, keys.eos_token_id, false);
}

void ModelConfig::validate_experts(const std::string& source, const ConfigKeys& keys) const {
  if (num_experts == 0 && num_experts_used == 0) return;
  // Every token's k expert ids and weights are kept per step; a count past this is a damaged
  // header, not a model (published ones have at most a few hundred experts, top-k <= 16).
  constexpr int kMaxExperts = 4096;
  if (num_experts <= 0 || num_experts > kMaxExperts)
    fail(source, ": ", keys.num_experts, " is ", num_experts, "; it must be 1 to ", kMaxExperts);
  // Both backends keep a token's choice in a fixed array of kMaxExpertsPerToken.
  if (num_experts_used <= 0 || num_experts_used > std::min(num_experts, kMaxExpertsPerToken)) {
    fail(source, ": ", keys.num_experts_used, " is ", num_experts_used, "; it must be 1 to the ",
         num_experts, " experts (at most ", kMaxExpertsPerToken, ")");
  }
  if (expert_intermediate_size <= 0) {
    fail(source, ": ", keys.expert_intermediate_size, " must be positive (got ",
         expert_intermediate_size, ")");
  }
}

void ModelConfig::validate_deltanet(const std::string& source) const {
  if (!is_hybrid()) return;
  const DeltaNetConfig& d = deltanet;
  // A state is [dk, dv] floats per value head and sequence: cap the dimensions well above the
  // published models (128) so that a damaged header cannot size a huge pool.
  constexpr int kMaxHeadDim = 1024;
  constexpr int kMaxHeads = 4096;
  constexpr int kMaxConvKernel = 64;
  auto in_range = [](int v, int hi) { return v > 0 && v <= hi; };
  if (!in_range(d.num_k_heads, kMaxHeads) || !in_range(d.num_v_heads, kMaxHeads) ||
      !in_range(d.k_head_dim, kMaxHeadDim) || !in_range(d.v_head_dim, kMaxHeadDim) ||
      !in_range(d.conv_kernel, kMaxConvKernel)) {
    fail(source, ": the Gated DeltaNet's shape (", d.num_k_heads, " key heads and ", d.num_v_heads,
         " value heads of ", d.k_head_dim, " and ", d.v_head_dim, ", convolution of ",
         d.conv_kernel, " taps) is out of range");
  }
  if (d.num_v_heads % d.num_k_heads != 0)
    fail(source, ": the Gated DeltaNet's ", d.num_v_heads,
         " value heads are not a multiple of its ", d.num_k_heads, " key heads");
  if (num_attention_layers() == 0)
    fail(source, ": a hybrid model needs at least one attention layer (none of the ", num_layers,
         " is)");
  if (num_deltanet_layers() == 0)
    fail(source, ": a hybrid model's configuration makes none of its ", num_layers,
         " layers a Gated DeltaNet layer");
}

float ModelConfig::effective_attention_scale() const {
  float scale =
      attention_scale > 0.0f ? attention_scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
  // LongRoPE and YaRN scale cos and sin by attention_factor, so q.k grows by its square.
  if (rope_scaling.type == RopeScaling::Type::LongRope ||
      rope_scaling.type == RopeScaling::Type::Yarn)
    scale *= rope_scaling.attention_factor * rope_scaling.attention_factor;
  return scale;
}

std::string ModelConfig::describe() const {
  return str_cat(
      architecture, ": ", num_layers, " layers, hidden ", hidden_size, ", ", num_heads, " heads (",
      num_kv_heads, " KV) of ", head_dim, ", FFN ", intermediate_size, ", vocab ", vocab_size,
      ", context ", max_position_embeddings, ", rope ",
      rope_layout == RopeLayout::Interleaved ? "interleaved" : "rotate-half", " theta ", rope_theta,
      tie_word_embeddings ? ", tied head" : "", has_qkv_bias ? ", qkv bias" : "",
      qk_norm ? ", q/k norm" : "", post_norms ? ", post norms" : "", activation_clause(activation),
      is_moe() ? str_cat(", ", num_experts, " experts (", num_experts_used, " per token) of FFN ",
                         expert_intermediate_size)
               : "",
      has_output_bias ? ", output bias" : "", attention_sinks ? ", attention sinks" : "",
      rotary_dim > 0 ? str_cat(", rotary ", rotary_dim, " of ", head_dim) : "",
      rope_scaling.type == RopeScaling::Type::LongRope ? ", LongRoPE" : "",
      attn_logit_softcap > 0 ? str_cat(", attention soft-cap ", attn_logit_softcap) : "",
      final_logit_softcap > 0 ? str_cat(", logit soft-cap ", final_logit_softcap) : "",
      window_summary(),
      is_hybrid()
          ? str_cat(", ", num_deltanet_layers(), " of ", num_layers, " layers Gated DeltaNet (",
                    deltanet.num_k_heads, "/", deltanet.num_v_heads, " heads of ",
                    deltanet.k_head_dim, ", state ", state_floats() * 4 / 1024, " KiB a sequence)")
          : "",
      attn_output_gate ? ", gated attention" : "",
      shared_expert_intermediate_size > 0
          ? str_cat(", shared expert of FFN ", shared_expert_intermediate_size)
          : "");
}

int ModelConfig::kv_window() const {
  int widest = 0;
  for (const LayerConfig& l : layers) {
    if (l.sliding_window <= 0) return 0;
    widest = std::max(widest, l.sliding_window);
  }
  return widest;
}

std::string ModelConfig::window_summary() const {
  int windowed = 0;
  for (const auto& l : layers) windowed += l.sliding_window > 0 ? 1 : 0;
  if (windowed == 0 || sliding_window == 0) return "";
  if (windowed == num_layers) return str_cat(", sliding window ", sliding_window);
  return str_cat(", sliding window ", sliding_window, " on ", windowed, " of ", num_layers,
                 " layers");
}

}  // namespace sluice
