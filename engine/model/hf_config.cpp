#include "engine/model/hf_config.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/core/mapped_file.h"

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
  } else {
    fail(path, ": rope_scaling type '", type,
         "' is not supported (Sluice supports linear and llama3)");
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

}  // namespace

ModelConfig read_hf_config(const std::string& path) {
  const json j = parse_json_file(path);
  if (!j.is_object()) fail(path, ": not a JSON object");
  ModelConfig c;
  const std::string model_type = get_string(j, path, "model_type", std::string());
  if (model_type != "llama" && model_type != "mistral" && model_type != "qwen2") {
    fail(path, ": model_type '", model_type,
         "' is not supported (Sluice runs llama, mistral and qwen2)");
  }
  c.architecture = model_type;
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
  c.tie_word_embeddings = get_bool(j, path, "tie_word_embeddings", false);
  c.has_qkv_bias = model_type == "qwen2" || get_bool(j, path, "attention_bias", false);
  if (get_bool(j, path, "mlp_bias", false)) fail(path, ": mlp_bias is not supported");
  const bool uses_window =
      model_type == "mistral" || get_bool(j, path, "use_sliding_window", false);
  if (uses_window) c.sliding_window = get_int(j, path, "sliding_window", 0);
  if (c.sliding_window > 0 && c.sliding_window < c.max_position_embeddings) {
    c.max_position_embeddings = c.sliding_window;  // attention never needs the window then
  }
  const std::string act = get_string(j, path, "hidden_act", std::string("silu"));
  if (act != "silu") fail(path, ": hidden_act '", act, "' is not supported (silu only)");
  read_special_ids(j, path, c);
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
