// What grammar matching needs to know about a tokenizer: the bytes every token id adds to the
// text, which ids may never appear in constrained text (control, unknown, unused and added
// special tokens, and pieces with no bytes), the ids that end generation, and the ids sorted by
// their bytes with each one's common prefix with the one before — a trie of the vocabulary laid
// out flat, so a walk shares the work of common prefixes and skips a dead prefix's subtree.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sluice {

class Tokenizer;

class TokenVocabulary {
 public:
  // token_bytes: [vocab_size] the bytes of each id ("" for ids that never appear in constrained
  // text); stop_ids: the ids that end generation (EOS and friends).
  TokenVocabulary(std::vector<std::string> token_bytes, std::vector<int32_t> stop_ids);

  // Returns the vocabulary of tokenizer, with bytes as decoded after the start of a sequence.
  static std::shared_ptr<const TokenVocabulary> from_tokenizer(const Tokenizer& tokenizer);

  int32_t vocab_size() const { return static_cast<int32_t>(token_bytes_.size()); }
  // The number of uint32 words of a token bitmask over this vocabulary.
  size_t num_mask_words() const { return (token_bytes_.size() + 31) / 32; }
  const std::string& token_bytes(int32_t id) const { return token_bytes_[id]; }
  bool is_stop_token(int32_t id) const;
  std::span<const int32_t> stop_ids() const { return stop_ids_; }
  // The ids with bytes, in ascending byte order (the flat trie).
  std::span<const int32_t> sorted_ids() const { return sorted_ids_; }

 private:
  std::vector<std::string> token_bytes_;
  std::vector<int32_t> stop_ids_;
  std::vector<int32_t> sorted_ids_;
};

// Returns the length of the common prefix of a and b.
size_t common_prefix_length(const std::string& a, const std::string& b);

}  // namespace sluice
