#include "engine/model/gguf_config.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "engine/core/error.h"
#include "engine/model/architecture.h"

namespace sluice {

namespace {

int to_int(const GgufFile& gguf, const std::string& key, int64_t value) {
  if (value < 0 || value > std::numeric_limits<int32_t>::max())
    fail(gguf.path(), ": metadata ", key, " = ", value, " is out of range");
  return static_cast<int>(value);
}

int get_dim(const GgufFile& gguf, const std::string& key) {
  return to_int(gguf, key, gguf.get_int(key));
}

int get_dim_or(const GgufFile& gguf, const std::string& key, int fallback) {
  return to_int(gguf, key, gguf.get_int_or(key, fallback));
}

int vocab_size_of(const GgufFile& gguf, const ConfigKeys& keys) {
  if (gguf.has(keys.vocab_size)) return get_dim(gguf, keys.vocab_size);
  if (gguf.has("tokenizer.ggml.tokens"))
    return static_cast<int>(gguf.get_string_array("tokenizer.ggml.tokens").size());
  if (const GgufTensorInfo* embd = gguf.find_tensor("token_embd.weight");
      embd && embd->shape.size() == 2) {
    return static_cast<int>(embd->shape[0]);
  }
  fail(gguf.path(), ": cannot tell the vocabulary size (no ", keys.vocab_size,
       ", tokenizer.ggml.tokens or token_embd.weight)");
}

float get_positive_float_or(const GgufFile& gguf, const std::string& key, double fallback) {
  const double value = gguf.get_float_or(key, fallback);
  if (!(value >= 0.0) || value > 1e30)
    fail(gguf.path(), ": metadata ", key, " = ", value, " must be a non-negative number");
  return static_cast<float>(value);
}

// Gemma's soft-caps and attention scale. llama.cpp's converter writes no
// query_pre_attn_scalar; its loader uses 1/sqrt(head_dim) except for the 27B models, whose
// scalar is hidden / heads (Gemma 2 27B: 4608 / 32, Gemma 3 27B: 5376 / 32).
void read_gemma_attention(const GgufFile& gguf, const std::string& arch, ModelConfig& c) {
  c.attn_logit_softcap = get_positive_float_or(gguf, arch + ".attn_logit_softcapping", 0.0);
  c.final_logit_softcap = get_positive_float_or(gguf, arch + ".final_logit_softcapping", 0.0);
  const bool is_27b = (arch == "gemma2" && c.num_layers == 46 && c.hidden_size == 4608) ||
                      (arch == "gemma3" && c.num_layers == 62 && c.hidden_size == 5376);
  if (is_27b) c.attention_scale = 1.0f / std::sqrt(static_cast<float>(c.hidden_size / c.num_heads));
}

std::vector<float> read_factor_tensor(const GgufFile& gguf, const std::string& name, int pairs) {
  const GgufTensorInfo* t = gguf.find_tensor(name);
  if (!t) fail(gguf.path(), ": LongRoPE needs tensor ", name);
  if (t->dtype != DType::F32 || t->shape != std::vector<int64_t>{pairs})
    fail(gguf.path(), ": tensor ", name, " must be F32 of shape [", pairs, "]");
  std::vector<float> out(static_cast<size_t>(pairs));
  std::memcpy(out.data(), t->data, out.size() * sizeof(float));
  return out;
}

// Phi-3's LongRoPE: rope_factors_long/short tensors, the original context and attention factor.
void read_long_rope(const GgufFile& gguf, const std::string& arch, ModelConfig& c) {
  if (!gguf.find_tensor("rope_factors_long.weight")) return;  // Phi-3 mini 4k: plain RoPE
  RopeScaling& s = c.rope_scaling;
  s.type = RopeScaling::Type::LongRope;
  const int pairs = c.rope_dims() / 2;
  s.long_factor = read_factor_tensor(gguf, "rope_factors_long.weight", pairs);
  s.short_factor = read_factor_tensor(gguf, "rope_factors_short.weight", pairs);
  s.original_max_position_embeddings =
      get_dim_or(gguf, arch + ".rope.scaling.original_context_length", 4096);
  if (s.original_max_position_embeddings <= 1)
    fail(gguf.path(), ": ", arch, ".rope.scaling.original_context_length must be above 1");
  const double ratio =
      static_cast<double>(c.max_position_embeddings) / s.original_max_position_embeddings;
  const double fallback =
      ratio <= 1.0
          ? 1.0
          : std::sqrt(1.0 + std::log(ratio) / std::log(s.original_max_position_embeddings));
  s.attention_factor = get_positive_float_or(gguf, arch + ".rope.scaling.attn_factor", fallback);
}

// YaRN (gpt-oss). llama.cpp multiplies cos and sin by attn_factor (1 when absent) times
// 1 + 0.1 ln(factor), and always rounds the ramp's ends outwards.
void read_yarn(const GgufFile& gguf, const std::string& arch, RopeScaling& s) {
  const std::string prefix = arch + ".rope.scaling.";
  s.type = RopeScaling::Type::Yarn;
  s.factor = get_positive_float_or(gguf, prefix + "factor", 1.0);
  if (!(s.factor >= 1.0f)) fail(gguf.path(), ": ", prefix, "factor must be at least 1");
  s.original_max_position_embeddings = get_dim(gguf, prefix + "original_context_length");
  if (s.original_max_position_embeddings <= 1)
    fail(gguf.path(), ": ", prefix, "original_context_length must be above 1");
  s.beta_fast = get_positive_float_or(gguf, prefix + "yarn_beta_fast", 32.0);
  s.beta_slow = get_positive_float_or(gguf, prefix + "yarn_beta_slow", 1.0);
  if (!(s.beta_fast > 0.0f && s.beta_slow > 0.0f))
    fail(gguf.path(), ": ", prefix, "yarn_beta_fast and yarn_beta_slow must be positive");
  s.attention_factor =
      get_positive_float_or(gguf, prefix + "attn_factor", 1.0) * (1.0f + 0.1f * std::log(s.factor));
  s.yarn_truncate = true;
}

// The expert counts; Mixtral's files give no expert FFN width (it is feed_forward_length).
void read_experts(const GgufFile& gguf, const ConfigKeys& keys, ModelConfig& c) {
  c.num_experts = to_int(gguf, keys.num_experts, gguf.get_int(keys.num_experts));
  c.num_experts_used = get_dim(gguf, keys.num_experts_used);
  c.expert_intermediate_size = get_dim_or(gguf, keys.expert_intermediate_size, c.intermediate_size);
}

// Qwen3.5's Gated DeltaNet (llama.cpp's ssm.* keys) and gated attention. llama.cpp derives the
// layer kinds from full_attention_interval: layer i attends iff (i + 1) % interval == 0. The
// converter stores the value heads tiled (value head m reads key head m % nk).
void read_deltanet(const GgufFile& gguf, const std::string& arch, ModelConfig& c) {
  DeltaNetConfig& d = c.deltanet;
  d.conv_kernel = get_dim(gguf, arch + ".ssm.conv_kernel");
  d.k_head_dim = get_dim(gguf, arch + ".ssm.state_size");
  d.num_k_heads = get_dim(gguf, arch + ".ssm.group_count");
  d.num_v_heads = get_dim(gguf, arch + ".ssm.time_step_rank");
  const int inner = get_dim(gguf, arch + ".ssm.inner_size");
  if (d.num_v_heads <= 0 || inner % d.num_v_heads != 0)
    fail(gguf.path(), ": ", arch, ".ssm.inner_size ", inner, " is not a multiple of ", arch,
         ".ssm.time_step_rank ", d.num_v_heads);
  d.v_head_dim = inner / d.num_v_heads;
  d.grouped_v_heads = false;
  c.attn_output_gate = true;
  c.shared_expert_intermediate_size =
      get_dim_or(gguf, arch + ".expert_shared_feed_forward_length", 0);
}

void assign_gguf_hybrid_layers(const GgufFile& gguf, const std::string& arch, ModelConfig& c) {
  if (c.layers.empty()) return;
  const std::string key = arch + ".full_attention_interval";
  const int interval = get_dim_or(gguf, key, 4);
  if (interval <= 0) fail(gguf.path(), ": ", key, " must be positive");
  for (int l = 0; l < c.num_layers; ++l) {
    c.layers[static_cast<size_t>(l)].kind =
        (l + 1) % interval == 0 ? LayerKind::Attention : LayerKind::DeltaNet;
  }
}

}  // namespace

ConfigKeys gguf_config_keys(const std::string& arch) {
  ConfigKeys keys;
  keys.hidden_size = arch + ".embedding_length";
  keys.intermediate_size = arch + ".feed_forward_length";
  keys.num_layers = arch + ".block_count";
  keys.num_heads = arch + ".attention.head_count";
  keys.num_kv_heads = arch + ".attention.head_count_kv";
  keys.head_dim = arch + ".attention.key_length";
  keys.vocab_size = arch + ".vocab_size";
  keys.max_position_embeddings = arch + ".context_length";
  keys.rms_norm_eps = arch + ".attention.layer_norm_rms_epsilon";
  keys.rope_theta = arch + ".rope.freq_base";
  keys.bos_token_id = "tokenizer.ggml.bos_token_id";
  keys.eos_token_id = "tokenizer.ggml.eos_token_id";
  keys.num_experts = arch + ".expert_count";
  keys.num_experts_used = arch + ".expert_used_count";
  keys.expert_intermediate_size = arch + ".expert_feed_forward_length";
  return keys;
}

ModelConfig read_gguf_config(const GgufFile& gguf) {
  const std::string arch = gguf.get_string("general.architecture");
  const ConfigKeys keys = gguf_config_keys(arch);
  const bool has_experts = gguf.get_int_or(keys.num_experts, 0) != 0;
  const Architecture* definition = find_gguf_architecture(arch, has_experts);
  if (!definition) {
    fail(gguf.path(), ": architecture '", arch, "' is not supported (Sluice runs ",
         supported_gguf_architectures(), " GGUF files)");
  }
  ModelConfig c;
  c.architecture = arch;
  c.hidden_size = get_dim(gguf, keys.hidden_size);
  c.intermediate_size = get_dim(gguf, keys.intermediate_size);
  c.num_layers = get_dim(gguf, keys.num_layers);
  c.num_heads = get_dim(gguf, keys.num_heads);
  c.num_kv_heads = get_dim_or(gguf, keys.num_kv_heads, c.num_heads);
  if (c.num_heads <= 0) fail(gguf.path(), ": ", keys.num_heads, " must be positive");
  if (!gguf.has(keys.head_dim) && c.hidden_size % c.num_heads != 0) {
    fail(gguf.path(), ": ", keys.hidden_size, " ", c.hidden_size, " is not divisible by ",
         keys.num_heads, " ", c.num_heads, " (and no ", keys.head_dim, " gives the head size)");
  }
  c.head_dim = get_dim_or(gguf, keys.head_dim, c.hidden_size / c.num_heads);
  const std::string value_length_key = arch + ".attention.value_length";
  const int value_length = get_dim_or(gguf, value_length_key, c.head_dim);
  if (value_length != c.head_dim) {
    fail(gguf.path(), ": key and value head sizes differ (", keys.head_dim, " ", c.head_dim, " vs ",
         value_length_key, " ", value_length, ")");
  }
  const std::string rope_dims_key = arch + ".rope.dimension_count";
  const int rope_dims = get_dim_or(gguf, rope_dims_key, c.head_dim);
  if (rope_dims <= 0 || rope_dims > c.head_dim || rope_dims % 2 != 0) {
    fail(gguf.path(), ": ", rope_dims_key, " ", rope_dims, " must be even and at most the ",
         c.head_dim, " head dimensions");
  }
  if (rope_dims != c.head_dim) c.rotary_dim = rope_dims;
  c.vocab_size = vocab_size_of(gguf, keys);
  if (has_experts) read_experts(gguf, keys, c);
  if (definition->hybrid) read_deltanet(gguf, arch, c);
  c.max_position_embeddings = get_dim(gguf, keys.max_position_embeddings);
  c.rms_norm_eps = static_cast<float>(gguf.get_float(keys.rms_norm_eps));
  c.rope_theta = static_cast<float>(gguf.get_float_or(keys.rope_theta, 10000.0));
  // llama.cpp stores llama q/k permuted for adjacent-pair RoPE; the others keep the HF layout.
  c.rope_layout =
      definition->gguf_rope_interleaved ? RopeLayout::Interleaved : RopeLayout::RotateHalf;
  const std::string scaling = gguf.get_string_or(arch + ".rope.scaling.type", "none");
  if (definition->fused_qkv) {  // Phi-3: LongRoPE factors come as tensors
    read_long_rope(gguf, arch, c);
  } else if (scaling == "linear") {
    c.rope_scaling.type = RopeScaling::Type::Linear;
    c.rope_scaling.factor = static_cast<float>(gguf.get_float(arch + ".rope.scaling.factor"));
  } else if (scaling == "yarn") {
    read_yarn(gguf, arch, c.rope_scaling);
  } else if (scaling != "none") {
    fail(gguf.path(), ": rope scaling '", scaling,
         "' is not supported (none, linear and yarn; llama3 comes as rope_freqs.weight)");
  }
  c.has_qkv_bias = gguf.find_tensor("blk.0.attn_q.bias") != nullptr;
  c.tie_word_embeddings = gguf.find_tensor("output.weight") == nullptr;
  int period = 0;
  float local_rope_theta = 0.0f;
  if (definition->window_pattern != WindowPattern::AllLayers &&
      definition->window_pattern != WindowPattern::Ignored) {  // Gemma: windows per layer
    c.sliding_window = get_dim_or(gguf, arch + ".attention.sliding_window", 0);
    // llama.cpp's converter does not write the Gemma 3 pattern; its loader assumes 6.
    period = get_dim_or(gguf, arch + ".attention.sliding_window_pattern", 6);
    local_rope_theta = static_cast<float>(gguf.get_float_or(arch + ".rope.freq_base_swa", 0.0));
  }
  if (definition->post_norms) read_gemma_attention(gguf, arch, c);
  c.bos_token_id = gguf.has(keys.bos_token_id) ? get_dim(gguf, keys.bos_token_id) : -1;
  c.eos_token_id = gguf.has(keys.eos_token_id) ? get_dim(gguf, keys.eos_token_id) : -1;
  apply_architecture(*definition, c, period, local_rope_theta);
  if (definition->hybrid) assign_gguf_hybrid_layers(gguf, arch, c);
  c.validate(gguf.path(), keys);
  return c;
}

}  // namespace sluice
