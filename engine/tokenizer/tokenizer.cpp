#include "engine/tokenizer/tokenizer.h"

namespace sluice {

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
  std::string out;
  bool is_at_start = true;
  for (const int32_t id : ids) {
    // A leading BOS does not use up the sequence start: the piece after it is the first text.
    if (is_at_start && id == bos_id() && bos_id() >= 0) continue;
    out += token_to_bytes(id, is_at_start);
    is_at_start = false;
  }
  return out;
}

size_t min_tokens_covering(size_t num_bytes, size_t max_token_bytes) {
  return max_token_bytes == 0 ? 0 : (num_bytes + max_token_bytes - 1) / max_token_bytes;
}

}  // namespace sluice
