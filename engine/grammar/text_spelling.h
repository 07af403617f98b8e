// The token ids that spell a text exactly in a vocabulary, so a text can be checked through the
// token-level matcher as the sampler would have produced it. The tokenizer's own encoding is
// used when its tokens' bytes (as the matcher sees them, after the start of a sequence) are the
// text; a SentencePiece dummy prefix (" " before the first token) is spelled away from the first
// token alone; any other difference (a normalizer that rewrote whitespace) falls back to the
// longest tokens that match, left to right.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/grammar/token_vocabulary.h"

namespace sluice {

class Tokenizer;

struct TextSpelling {
  std::vector<int32_t> token_ids;
  std::vector<size_t> byte_offsets;  // [token_ids.size()] where each token starts in the text
  // How the spelling departs from the tokenizer's encoding: "" when it does not, or only by the
  // dummy prefix (a model writing after its prompt has no such space to drop).
  std::string note;
  bool is_complete = true;      // false: no token spells the byte at byte_offsets.back() onwards
  size_t unspelled_offset = 0;  // the first byte no token spells, when !is_complete
};

class TextSpeller {
 public:
  // vocabulary must be the tokenizer's (or any, when tokenizer is null: then the longest matches
  // are the spelling). tokenizer must outlive this object.
  TextSpeller(const Tokenizer* tokenizer, std::shared_ptr<const TokenVocabulary> vocabulary);

  // Returns the ids spelling text: the tokenizer's encoding (no BOS) when given and exact, else
  // as described above.
  TextSpelling spell(std::string_view text) const;

 private:
  // Appends the longest-match spelling of text (at base_offset of the whole text) to spelling.
  void spell_longest(std::string_view text, size_t base_offset, TextSpelling& spelling) const;

  const Tokenizer* tokenizer_;
  std::shared_ptr<const TokenVocabulary> vocabulary_;
  std::unordered_map<std::string, int32_t> ids_;  // the lowest id of each byte string
  size_t max_token_bytes_ = 0;
};

}  // namespace sluice
