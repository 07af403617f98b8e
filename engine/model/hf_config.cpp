#include "engine/model/hf_config.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/core/mapped_file.h"
#include "engine/model/architecture.h"

namespace sluice {

namespace {

using nlohmann::json;

json parse_json_file(const std::string& path) {
  return parse_json_text<json>(read_text_file(path), path);
}

int get_int(const json& j, const std::string& path, const char* key, std::optional<int> fallback) {
  if (!j.contains(key) || j[key].is_null()) {
    if (!fallback) fail(path, ": missing key ", key);
    return *fallback;
  }
  if (!j[key].is_number_integer()) fail(path, ": ", key, " must be an integer");
  const auto value = j[key].get<int64_t>();
  if (value < INT32_MIN || value > INT32_MAX) fail(path, ": ", key, " is out of range");
  return static_cast<int>(value);
}

float get_float(const json& j, const std::string& path, const char* key, float fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_number()) fail(path, ": ", key, " must be a number");
  const double value = j[key].get<double>();
  // A double past float's range would become infinity and poison every later computation.
  if (!(std::abs(value) <= std::numeric_limits<float>::max()))
    fail(path, ": ", key, " ", value, " is out of range for a float");
  return static_cast<float>(value);
}

std::string get_string(const json& j, const std::string& path, const char* key,
                       const std::string& fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_string()) fail(path, ": ", key, " must be a string, not ", json_type_name(j[key]));
  return j[key].get<std::string>();
}

bool get_bool(const json& j, const std::string& path, const char* key, bool fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_boolean()) fail(path, ": ", key, " must be true or false");
  return j[key].get<bool>();
}

std::vector<float> read_factor_list(const json& rs, const std::string& path, const char* key) {
  if (!rs.contains(key) || !rs[key].is_array() || rs[key].empty())
    fail(path, ": rope_scaling.", key, " must be a list of numbers");
  std::vector<float> out;
  for (size_t i = 0; i < rs[key].size(); ++i) {
    const json& v = rs[key][i];
    if (!v.is_number() || !(v.get<double>() > 0.0) || v.get<double>() > 1e30)
      fail(path, ": rope_scaling.", key, "[", i, "] must be a positive number");
    out.push_back(v.get<float>());
  }
  return out;
}

// LongRoPE (Phi-3.5, Phi-4-mini): short and long per-pair factors, the original context, and
// the attention factor (given, or sqrt(1 + ln(s) / ln(original)) for s = context / original).
void read_long_rope(const json& j, const json& rs, const std::string& path, RopeScaling& scaling) {
  scaling.type = RopeScaling::Type::LongRope;
  scaling.short_factor = read_factor_list(rs, path, "short_factor");
  scaling.long_factor = read_factor_list(rs, path, "long_factor");
  if (scaling.short_factor.size() != scaling.long_factor.size())
    fail(path, ": rope_scaling short_factor and long_factor differ in length");
  scaling.original_max_position_embeddings =
      get_int(j, path, "original_max_position_embeddings",
              get_int(rs, path, "original_max_position_embeddings", 4096));
  if (scaling.original_max_position_embeddings <= 1)
    fail(path, ": original_max_position_embeddings must be above 1");
  const int context = get_int(j, path, "max_position_embeddings", 4096);
  const double s = static_cast<double>(context) / scaling.original_max_position_embeddings;
  const double fallback =
      s <= 1.0 ? 1.0
               : std::sqrt(1.0 + std::log(s) / std::log(scaling.original_max_position_embeddings));
  scaling.attention_factor = get_float(rs, path, "attention_factor", static_cast<float>(fallback));
}

// YaRN (gpt-oss): transformers' rule, including `truncate` (rounding the ramp's ends) and the
// default attention factor 0.1 ln(factor) + 1.
void read_yarn(const json& rs, const std::string& path, RopeScaling& scaling) {
  scaling.type = RopeScaling::Type::Yarn;
  if (!(scaling.factor >= 1.0f)) fail(path, ": rope_scaling.factor must be at least 1");
  scaling.original_max_position_embeddings =
      get_int(rs, path, "original_max_position_embeddings", std::nullopt);
  if (scaling.original_max_position_embeddings <= 1)
    fail(path, ": rope_scaling.original_max_position_embeddings must be above 1");
  scaling.beta_fast = get_float(rs, path, "beta_fast", 32.0f);
  scaling.beta_slow = get_float(rs, path, "beta_slow", 1.0f);
  if (!(scaling.beta_fast > 0.0f && scaling.beta_slow > 0.0f))
    fail(path, ": rope_scaling.beta_fast and beta_slow must be positive");
  scaling.yarn_truncate = get_bool(rs, path, "truncate", true);
  scaling.attention_factor =
      get_float(rs, path, "attention_factor", 1.0f + 0.1f * std::log(scaling.factor));
  if (!(scaling.attention_factor > 0.0f))
    fail(path, ": rope_scaling.attention_factor must be positive");
}

RopeScaling read_rope_scaling(const json& j, const std::string& path) {
  RopeScaling scaling;
  if (!j.contains("rope_scaling") || j["rope_scaling"].is_null()) return scaling;
  const json& rs = j["rope_scaling"];
  if (!rs.is_object()) fail(path, ": rope_scaling must be an object or null");
  const std::string type =
      get_string(rs, path, "rope_type", get_string(rs, path, "type", std::string("default")));
  if (type == "default") return scaling;
  scaling.factor = get_float(rs, path, "factor", 1.0f);
  if (type == "linear") {
    scaling.type = RopeScaling::Type::Linear;
  } else if (type == "llama3") {
    scaling.type = RopeScaling::Type::Llama3;
    scaling.low_freq_factor = get_float(rs, path, "low_freq_factor", 1.0f);
    scaling.high_freq_factor = get_float(rs, path, "high_freq_factor", 4.0f);
    scaling.original_max_position_embeddings =
        get_int(rs, path, "original_max_position_embeddings", 8192);
  } else if (type == "longrope" || type == "su") {
    read_long_rope(j, rs, path, scaling);
  } else if (type == "yarn") {
    read_yarn(rs, path, scaling);
  } else {
    fail(path, ": rope_scaling type '", type,
         "' is not supported (Sluice supports linear, llama3, longrope and yarn)");
  }
  return scaling;
}

// A special token id as config.json gives it: absent or null means none (-1); anything else
// must be a token of the vocabulary (validate() checks the upper end).
int read_token_id(const json& value, const std::string& path, const std::string& key) {
  if (!value.is_number_integer()) fail(path, ": ", key, " must be an integer token id");
  const auto id = value.get<int64_t>();
  if (id < 0 || id > INT32_MAX) fail(path, ": ", key, " ", id, " is not a token id");
  return static_cast<int>(id);
}

void read_special_ids(const json& j, const std::string& path, ModelConfig& c) {
  if (j.contains("bos_token_id") && !j["bos_token_id"].is_null())
    c.bos_token_id = read_token_id(j["bos_token_id"], path, "bos_token_id");
  if (!j.contains("eos_token_id") || j["eos_token_id"].is_null()) return;
  const json& eos = j["eos_token_id"];
  if (!eos.is_array()) {
    c.eos_token_id = read_token_id(eos, path, "eos_token_id");
    return;
  }
  for (size_t i = 0; i < eos.size(); ++i) {
    const int id = read_token_id(eos[i], path, str_cat("eos_token_id[", i, "]"));
    if (c.eos_token_id < 0) {
      c.eos_token_id = id;
    } else {
      c.extra_eos_token_ids.push_back(id);
    }
  }
}

// The gated FFN's activation: hidden_act (Llama family) or hidden_activation (Gemma).
void read_activation(const json& j, const std::string& path, const Architecture& arch) {
  if (arch.activation == Activation::GeluTanh) {
    const char* key = j.contains("hidden_activation") && !j["hidden_activation"].is_null()
                          ? "hidden_activation"
                          : "hidden_act";
    const std::string act = get_string(j, path, key, std::string("gelu_pytorch_tanh"));
    if (act != "gelu_pytorch_tanh" && act != "gelu_tanh")
      fail(path, ": ", key, " '", act, "' is not supported for ", arch.name,
           " (gelu_pytorch_tanh)");
    return;
  }
  const std::string act = get_string(j, path, "hidden_act", std::string("silu"));
  if (act != "silu") fail(path, ": hidden_act '", act, "' is not supported (silu only)");
}

// partial_rotary_factor (Phi-4-mini): RoPE turns only the first part of each head.
void read_partial_rotary(const json& j, const std::string& path, ModelConfig& c) {
  const float factor = get_float(j, path, "partial_rotary_factor", 1.0f);
  if (!(factor > 0.0f && factor <= 1.0f))
    fail(path, ": partial_rotary_factor ", factor, " must be in (0, 1]");
  if (factor < 1.0f) {
    c.rotary_dim = static_cast<int>(std::lround(static_cast<double>(factor) * c.head_dim));
    if (c.rotary_dim < 2 || c.rotary_dim % 2 != 0)
      fail(path, ": partial_rotary_factor ", factor, " gives ", c.rotary_dim,
           " rotary dimensions; need an even number of at least 2");
  }
}

// Qwen2/Qwen3 with use_sliding_window: only the layers from max_window_layers on are windowed.
void read_qwen_window_layers(const json& j, const std::string& path, const std::string& model_type,
                             ModelConfig& c) {
  if ((model_type != "qwen2" && model_type != "qwen3") || c.sliding_window <= 0) return;
  const int first = get_int(j, path, "max_window_layers", c.num_layers);
  for (size_t l = 0; l < c.layers.size() && static_cast<int>(l) < first; ++l)
    c.layers[l].sliding_window = 0;
}

// layer_types (newer Gemma configs): "sliding_attention" or "full_attention" per layer,
// overriding the pattern.
void read_layer_types(const json& j, const std::string& path, ModelConfig& c) {
  if (!j.contains("layer_types") || j["layer_types"].is_null()) return;
  const json& types = j["layer_types"];
  if (!types.is_array() || types.size() != c.layers.size())
    fail(path, ": layer_types must list one type for each of the ", c.num_layers, " layers");
  for (size_t l = 0; l < types.size(); ++l) {
    const std::string type = types[l].is_string() ? types[l].get<std::string>() : std::string();
    if (type == "linear_attention" && c.is_hybrid()) {
      c.layers[l].kind = LayerKind::DeltaNet;
      continue;
    }
    if (c.is_hybrid()) c.layers[l].kind = LayerKind::Attention;
    if (type != "sliding_attention" && type != "full_attention")
      fail(path, ": layer_types[", l, "] must be \"sliding_attention\" or \"full_attention\"",
           c.is_hybrid() ? " or \"linear_attention\"" : "");
    if (type == "full_attention") {
      c.layers[l].sliding_window = 0;
      c.layers[l].rope_theta = c.rope_theta;
      c.layers[l].rope_scaling = c.rope_scaling;
    } else if (c.sliding_window > 0) {
      c.layers[l].sliding_window = c.sliding_window;
    }
  }
}

// The experts of a mixture-of-experts config (num_experts or num_local_experts). Every layer must
// be sparse: Qwen-MoE's mlp_only_layers and decoder_sparse_step can make some dense.
void read_experts(const json& j, const std::string& path, const std::string& model_type,
                  ModelConfig& c) {
  const char* count_key = j.contains("num_local_experts") ? "num_local_experts" : "num_experts";
  c.num_experts = get_int(j, path, count_key, 0);
  if (c.num_experts == 0) {
    if (model_type != "qwen3_moe" && model_type != "mixtral" && model_type != "gpt_oss") return;
    fail(path, ": a ", model_type, " config needs num_experts or num_local_experts");
  }
  c.num_experts_used = get_int(j, path, "num_experts_per_tok", std::nullopt);
  c.expert_intermediate_size = get_int(j, path, "moe_intermediate_size", c.intermediate_size);
  // transformers' Qwen3-MoE renormalises only with norm_topk_prob (default false); Mixtral always.
  if (model_type == "qwen3_moe") c.moe_renormalize = get_bool(j, path, "norm_topk_prob", false);
  if (get_int(j, path, "decoder_sparse_step", 1) != 1 ||
      (j.contains("mlp_only_layers") && j["mlp_only_layers"].is_array() &&
       !j["mlp_only_layers"].empty())) {
    fail(path,
         ": layers with a dense FFN among the sparse ones (decoder_sparse_step, "
         "mlp_only_layers) are not supported");
  }
  const float limit = get_float(j, path, "swiglu_limit", 7.0f);
  if (model_type == "gpt_oss" && limit != 7.0f)
    fail(path, ": swiglu_limit ", limit, " is not supported (gpt-oss's 7)");
}

// Qwen3.5's Gated DeltaNet layers (linear_*) and gated attention; transformers 5 moves
// rope_theta and partial_rotary_factor into rope_parameters. Layer kinds come from layer_types
// (read_layer_types) or, without it, full_attention_interval (every n-th layer attends).
void read_deltanet(const json& j, const std::string& path, ModelConfig& c) {
  if (!j.contains("linear_num_value_heads")) fail(path, ": a Qwen3.5 config needs linear_* keys");
  DeltaNetConfig& d = c.deltanet;
  d.num_k_heads = get_int(j, path, "linear_num_key_heads", std::nullopt);
  d.num_v_heads = get_int(j, path, "linear_num_value_heads", std::nullopt);
  d.k_head_dim = get_int(j, path, "linear_key_head_dim", std::nullopt);
  d.v_head_dim = get_int(j, path, "linear_value_head_dim", std::nullopt);
  d.conv_kernel = get_int(j, path, "linear_conv_kernel_dim", 4);
  d.grouped_v_heads = true;  // transformers' repeat_interleave of the key heads
  c.attn_output_gate = get_bool(j, path, "attn_output_gate", true);
  c.shared_expert_intermediate_size = get_int(j, path, "shared_expert_intermediate_size", 0);
  if (j.contains("rope_parameters") && j["rope_parameters"].is_object()) {
    const json& rp = j["rope_parameters"];
    c.rope_theta = get_float(rp, path, "rope_theta", c.rope_theta);
    if (rp.contains("partial_rotary_factor")) read_partial_rotary(rp, path, c);
  }
}

void assign_hybrid_layers(const json& j, const std::string& path, ModelConfig& c) {
  if (!c.is_hybrid() || c.layers.empty()) return;
  const int interval = get_int(j, path, "full_attention_interval", 4);
  if (interval <= 0) fail(path, ": full_attention_interval must be positive");
  for (int l = 0; l < c.num_layers; ++l) {
    c.layers[static_cast<size_t>(l)].kind =
        (l + 1) % interval == 0 ? LayerKind::Attention : LayerKind::DeltaNet;
  }
}

}  // namespace

namespace {

// Qwen3.5's published checkpoints are multimodal (model_type qwen3_5 / qwen3_5_moe): the text
// model's keys sit in text_config, with a few (tie_word_embeddings) at the top.
json text_model_config(json j, const std::string& path) {
  const std::string type = get_string(j, path, "model_type", std::string());
  if ((type != "qwen3_5" && type != "qwen3_5_moe") || !j.contains("text_config")) return j;
  if (!j["text_config"].is_object()) fail(path, ": text_config must be an object");
  json text = j["text_config"];
  for (const auto& [key, value] : j.items()) {
    if (key != "text_config" && key != "vision_config" && !text.contains(key)) text[key] = value;
  }
  text["model_type"] = type + "_text";
  return text;
}

}  // namespace

bool hf_config_is_multimodal(const std::string& path) {
  const json j = parse_json_file(path);
  return j.is_object() && j.contains("text_config");
}

ModelConfig read_hf_config(const std::string& path) {
  const json top = parse_json_file(path);
  if (!top.is_object()) fail(path, ": not a JSON object");
  const json j = text_model_config(top, path);
  ModelConfig c;
  const std::string model_type = get_string(j, path, "model_type", std::string());
  const Architecture* arch = find_hf_architecture(model_type);
  if (!arch && model_type == "gemma3") {
    fail(path,
         ": model_type 'gemma3' is the multimodal Gemma 3 checkpoint; Sluice runs the text "
         "model (model_type gemma3_text, Gemma3ForCausalLM) or a GGUF file of it");
  }
  if (!arch) {
    fail(path, ": model_type '", model_type, "' is not supported (Sluice runs ",
         supported_hf_architectures(), ")");
  }
  c.hidden_size = get_int(j, path, "hidden_size", std::nullopt);
  c.intermediate_size = get_int(j, path, "intermediate_size", std::nullopt);
  c.num_layers = get_int(j, path, "num_hidden_layers", std::nullopt);
  c.num_heads = get_int(j, path, "num_attention_heads", std::nullopt);
  c.num_kv_heads = get_int(j, path, "num_key_value_heads", c.num_heads);
  if (c.num_heads <= 0) fail(path, ": num_attention_heads must be positive");
  if ((!j.contains("head_dim") || j["head_dim"].is_null()) && c.hidden_size % c.num_heads != 0) {
    fail(path, ": hidden_size ", c.hidden_size, " is not divisible by num_attention_heads ",
         c.num_heads, " (and no head_dim gives the head size)");
  }
  c.head_dim = get_int(j, path, "head_dim", c.hidden_size / c.num_heads);
  c.vocab_size = get_int(j, path, "vocab_size", std::nullopt);
  c.max_position_embeddings = get_int(j, path, "max_position_embeddings", 2048);
  c.rms_norm_eps = get_float(j, path, "rms_norm_eps", 1e-6f);
  c.rope_theta = get_float(j, path, "rope_theta", 10000.0f);
  c.rope_layout = RopeLayout::RotateHalf;
  c.rope_scaling = read_rope_scaling(j, path);
  c.tie_word_embeddings = get_bool(j, path, "tie_word_embeddings", arch->hf_tied_by_default);
  c.has_qkv_bias = model_type == "qwen2" || get_bool(j, path, "attention_bias", false);
  if (get_bool(j, path, "mlp_bias", false)) fail(path, ": mlp_bias is not supported");
  if (arch->hf_norm_plus_one) c.norm_weight_offset = 1.0f;
  read_activation(j, path, *arch);
  read_partial_rotary(j, path, c);
  read_experts(j, path, model_type, c);
  if (arch->hybrid) read_deltanet(j, path, c);
  int period = 0;
  float local_rope_theta = 0.0f;
  if (arch->window_pattern == WindowPattern::AllLayers) {
    const bool uses_window =
        model_type == "mistral" || get_bool(j, path, "use_sliding_window", false);
    if (uses_window) c.sliding_window = get_int(j, path, "sliding_window", 0);
    if (c.sliding_window < 0) fail(path, ": sliding_window must not be negative");
  } else if (arch->window_pattern != WindowPattern::Ignored) {  // Gemma: windows per layer
    c.sliding_window = get_int(j, path, "sliding_window", 0);
    period = get_int(j, path, "sliding_window_pattern", 6);
    local_rope_theta = get_float(j, path, "rope_local_base_freq", 0.0f);
  }
  if (arch->post_norms) {  // Gemma's attention options
    const float scalar = get_float(j, path, "query_pre_attn_scalar", 0.0f);
    if (scalar < 0.0f) fail(path, ": query_pre_attn_scalar must be positive");
    if (scalar > 0.0f) c.attention_scale = 1.0f / std::sqrt(scalar);
    c.attn_logit_softcap = get_float(j, path, "attn_logit_softcapping", 0.0f);
    c.final_logit_softcap = get_float(j, path, "final_logit_softcapping", 0.0f);
  }
  read_special_ids(j, path, c);
  apply_architecture(*arch, c, period, local_rope_theta);
  read_qwen_window_layers(j, path, model_type, c);
  assign_hybrid_layers(j, path, c);
  read_layer_types(j, path, c);
  c.validate(path);
  return c;
}

std::string read_hf_chat_template(const std::string& tokenizer_config_path) {
  if (!std::filesystem::exists(tokenizer_config_path)) return "";
  const json j = parse_json_file(tokenizer_config_path);
  if (!j.is_object() || !j.contains("chat_template")) return "";
  const json& t = j["chat_template"];
  if (t.is_string()) return t.get<std::string>();
  if (t.is_array()) {
    for (const auto& entry : t) {
      // Named templates: {"name": "default", "template": "..."}; entries of any other shape
      // are not the default template.
      if (entry.is_object() && entry.contains("name") && entry["name"] == "default" &&
          entry.contains("template") && entry["template"].is_string()) {
        return entry["template"].get<std::string>();
      }
    }
  }
  return "";
}

}  // namespace sluice
