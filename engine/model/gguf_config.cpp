#include "engine/model/gguf_config.h"

#include <limits>

#include "engine/core/error.h"

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
  return keys;
}

ModelConfig read_gguf_config(const GgufFile& gguf) {
  const std::string arch = gguf.get_string("general.architecture");
  if (arch != "llama" && arch != "qwen2") {
    fail(gguf.path(), ": architecture '", arch,
         "' is not supported (Sluice runs llama and qwen2 GGUF files)");
  }
  const ConfigKeys keys = gguf_config_keys(arch);
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
  if (rope_dims != c.head_dim) {
    fail(gguf.path(), ": partial RoPE (", rope_dims_key, " ", rope_dims, " of ", c.head_dim,
         " head dimensions) is not supported");
  }
  c.vocab_size = vocab_size_of(gguf, keys);
  c.max_position_embeddings = get_dim(gguf, keys.max_position_embeddings);
  c.rms_norm_eps = static_cast<float>(gguf.get_float(keys.rms_norm_eps));
  c.rope_theta = static_cast<float>(gguf.get_float_or(keys.rope_theta, 10000.0));
  // llama.cpp stores llama q/k permuted for adjacent-pair RoPE; qwen2 keeps the HF layout.
  c.rope_layout = arch == "qwen2" ? RopeLayout::RotateHalf : RopeLayout::Interleaved;
  const std::string scaling = gguf.get_string_or(arch + ".rope.scaling.type", "none");
  if (scaling == "linear") {
    c.rope_scaling.type = RopeScaling::Type::Linear;
    c.rope_scaling.factor = static_cast<float>(gguf.get_float(arch + ".rope.scaling.factor"));
  } else if (scaling != "none") {
    fail(gguf.path(), ": rope scaling '", scaling,
         "' is not supported (none and linear; llama3 comes as rope_freqs.weight)");
  }
  c.has_qkv_bias = gguf.find_tensor("blk.0.attn_q.bias") != nullptr;
  c.tie_word_embeddings = gguf.find_tensor("output.weight") == nullptr;
  c.bos_token_id = gguf.has(keys.bos_token_id) ? get_dim(gguf, keys.bos_token_id) : -1;
  c.eos_token_id = gguf.has(keys.eos_token_id) ? get_dim(gguf, keys.eos_token_id) : -1;
  c.validate(gguf.path(), keys);
  return c;
}

}  // namespace sluice
