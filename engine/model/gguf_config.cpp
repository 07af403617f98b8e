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

int vocab_size_of(const GgufFile& gguf, const std::string& arch) {
  if (gguf.has(arch + ".vocab_size")) return get_dim(gguf, arch + ".vocab_size");
  if (gguf.has("tokenizer.ggml.tokens"))
    return static_cast<int>(gguf.get_string_array("tokenizer.ggml.tokens").size());
  if (const GgufTensorInfo* embd = gguf.find_tensor("token_embd.weight");
      embd && embd->shape.size() == 2) {
    return static_cast<int>(embd->shape[0]);
  }
  fail(gguf.path(), ": cannot tell the vocabulary size (no ", arch,
       ".vocab_size, tokenizer.ggml.tokens or token_embd.weight)");
}

}  // namespace

ModelConfig read_gguf_config(const GgufFile& gguf) {
  const std::string arch = gguf.get_string("general.architecture");
  if (arch != "llama" && arch != "qwen2") {
    fail(gguf.path(), ": architecture '", arch,
         "' is not supported (Sluice runs llama and qwen2 GGUF files)");
  }
  ModelConfig c;
  c.architecture = arch;
  c.hidden_size = get_dim(gguf, arch + ".embedding_length");
  c.intermediate_size = get_dim(gguf, arch + ".feed_forward_length");
  c.num_layers = get_dim(gguf, arch + ".block_count");
  c.num_heads = get_dim(gguf, arch + ".attention.head_count");
  c.num_kv_heads = get_dim_or(gguf, arch + ".attention.head_count_kv", c.num_heads);
  if (c.num_heads <= 0) fail(gguf.path(), ": ", arch, ".attention.head_count must be positive");
  c.head_dim = get_dim_or(gguf, arch + ".attention.key_length", c.hidden_size / c.num_heads);
  const int value_length = get_dim_or(gguf, arch + ".attention.value_length", c.head_dim);
  if (value_length != c.head_dim)
    fail(gguf.path(), ": key and value head sizes differ (", c.head_dim, " vs ", value_length, ")");
  const int rope_dims = get_dim_or(gguf, arch + ".rope.dimension_count", c.head_dim);
  if (rope_dims != c.head_dim)
    fail(gguf.path(), ": partial RoPE (", rope_dims, " of ", c.head_dim,
         " dimensions) is not supported");
  c.vocab_size = vocab_size_of(gguf, arch);
  c.max_position_embeddings = get_dim(gguf, arch + ".context_length");
  c.rms_norm_eps = static_cast<float>(gguf.get_float(arch + ".attention.layer_norm_rms_epsilon"));
  c.rope_theta = static_cast<float>(gguf.get_float_or(arch + ".rope.freq_base", 10000.0));
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
  const std::string bos_key = "tokenizer.ggml.bos_token_id",
                    eos_key = "tokenizer.ggml.eos_token_id";
  c.bos_token_id = gguf.has(bos_key) ? get_dim(gguf, bos_key) : -1;
  c.eos_token_id = gguf.has(eos_key) ? get_dim(gguf, eos_key) : -1;
  c.validate(gguf.path());
  return c;
}

}  // namespace sluice
