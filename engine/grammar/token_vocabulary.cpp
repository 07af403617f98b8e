#include "engine/grammar/token_vocabulary.h"

#include <algorithm>

#include "engine/tokenizer/tokenizer.h"

namespace sluice {

TokenVocabulary::TokenVocabulary(std::vector<std::string> token_bytes,
                                 std::vector<int32_t> stop_ids)
    : token_bytes_(std::move(token_bytes)), stop_ids_(std::move(stop_ids)) {
  std::sort(stop_ids_.begin(), stop_ids_.end());
  stop_ids_.erase(std::unique(stop_ids_.begin(), stop_ids_.end()), stop_ids_.end());
  for (int32_t id = 0; id < vocab_size(); ++id) {
    if (!token_bytes_[id].empty() && !is_stop_token(id)) sorted_ids_.push_back(id);
  }
  std::sort(sorted_ids_.begin(), sorted_ids_.end(), [this](int32_t a, int32_t b) {
    return token_bytes_[a] != token_bytes_[b] ? token_bytes_[a] < token_bytes_[b] : a < b;
  });
}

std::shared_ptr<const TokenVocabulary> TokenVocabulary::from_tokenizer(const Tokenizer& tokenizer) {
  std::vector<std::string> bytes(static_cast<size_t>(tokenizer.vocab_size()));
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    TokenKind kind = tokenizer.token_kind(id);
    if (kind == TokenKind::Normal || kind == TokenKind::Byte) {
      bytes[id] = tokenizer.token_to_bytes(id, /*at_sequence_start=*/false);
    }
  }
  std::vector<int32_t> stop_ids = tokenizer.extra_stop_ids();
  if (tokenizer.eos_id() >= 0) stop_ids.push_back(tokenizer.eos_id());
  std::erase_if(stop_ids, [&](int32_t id) { return id < 0 || id >= tokenizer.vocab_size(); });
  return std::make_shared<TokenVocabulary>(std::move(bytes), std::move(stop_ids));
}

bool TokenVocabulary::is_stop_token(int32_t id) const {
  return std::binary_search(stop_ids_.begin(), stop_ids_.end(), id);
}

size_t common_prefix_length(const std::string& a, const std::string& b) {
  size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

}  // namespace sluice
