#include "engine/model/model_config.h"

#include <cmath>

#include "engine/core/error.h"

namespace sluice {

void ModelConfig::validate(const std::string& source) const {
  auto require_positive = [&](int value, const char* name) {
    if (value <= 0) fail(source, ": ", name, " must be positive (got ", value, ")");
  };
  require_positive(hidden_size, "hidden_size");
  require_positive(intermediate_size, "intermediate_size");
  require_positive(num_layers, "num_hidden_layers");
  require_positive(num_heads, "num_attention_heads");
  require_positive(num_kv_heads, "num_key_value_heads");
  require_positive(head_dim, "head_dim");
  require_positive(vocab_size, "vocab_size");
  require_positive(max_position_embeddings, "max_position_embeddings");
  if (num_heads % num_kv_heads != 0) {
    fail(source, ": num_attention_heads (", num_heads,
         ") is not a multiple of num_key_value_heads (", num_kv_heads, ")");
  }
  if (head_dim % 2 != 0) fail(source, ": head_dim (", head_dim, ") must be even for RoPE");
  if (!(rms_norm_eps > 0.0f) || !std::isfinite(rms_norm_eps))
    fail(source, ": rms_norm_eps must be positive");
  if (!(rope_theta > 0.0f) || !std::isfinite(rope_theta))
    fail(source, ": rope_theta must be positive");
  if (rope_scaling.type != RopeScaling::Type::None && !(rope_scaling.factor > 0.0f)) {
    fail(source, ": rope_scaling factor must be positive");
  }
  if (bos_token_id >= vocab_size)
    fail(source, ": bos_token_id ", bos_token_id, " is outside the vocabulary (", vocab_size, ")");
  if (eos_token_id >= vocab_size)
    fail(source, ": eos_token_id ", eos_token_id, " is outside the vocabulary (", vocab_size, ")");
}

std::string ModelConfig::describe() const {
  return str_cat(architecture, ": ", num_layers, " layers, hidden ", hidden_size, ", ", num_heads,
                 " heads (", num_kv_heads, " KV) of ", head_dim, ", FFN ", intermediate_size,
                 ", vocab ", vocab_size, ", context ", max_position_embeddings, ", rope ",
                 rope_layout == RopeLayout::Interleaved ? "interleaved" : "rotate-half", " theta ",
                 rope_theta, tie_word_embeddings ? ", tied head" : "",
                 has_qkv_bias ? ", qkv bias" : "");
}

}  // namespace sluice
