#include "engine/model/model_config.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "engine/core/error.h"

namespace sluice {

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

std::string ModelConfig::describe() const {
  return str_cat(architecture, ": ", num_layers, " layers, hidden ", hidden_size, ", ", num_heads,
                 " heads (", num_kv_heads, " KV) of ", head_dim, ", FFN ", intermediate_size,
                 ", vocab ", vocab_size, ", context ", max_position_embeddings, ", rope ",
                 rope_layout == RopeLayout::Interleaved ? "interleaved" : "rotate-half", " theta ",
                 rope_theta, tie_word_embeddings ? ", tied head" : "",
                 has_qkv_bias ? ", qkv bias" : "");
}

}  // namespace sluice
