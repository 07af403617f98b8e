#include "engine/grammar/text_spelling.h"

#include <algorithm>

#include "engine/tokenizer/tokenizer.h"

namespace sluice {
namespace {

// The bytes of ids in vocabulary, and where each starts.
std::string spelled_bytes(const TokenVocabulary& vocabulary, const std::vector<int32_t>& ids,
                          std::vector<size_t>& offsets) {
  std::string out;
  offsets.clear();
  for (const int32_t id : ids) {
    offsets.push_back(out.size());
    if (id >= 0 && id < vocabulary.vocab_size()) out += vocabulary.token_bytes(id);
  }
  return out;
}

}  // namespace

TextSpeller::TextSpeller(const Tokenizer* tokenizer,
                         std::shared_ptr<const TokenVocabulary> vocabulary)
    : tokenizer_(tokenizer), vocabulary_(std::move(vocabulary)) {
  // sorted_ids() leaves out stop tokens and ids with no bytes.
  for (const int32_t id : vocabulary_->sorted_ids()) {
    const std::string& bytes = vocabulary_->token_bytes(id);
    auto [it, is_new] = ids_.try_emplace(bytes, id);
    if (!is_new) it->second = std::min(it->second, id);
    max_token_bytes_ = std::max(max_token_bytes_, bytes.size());
  }
}

void TextSpeller::spell_longest(std::string_view text, size_t base_offset,
                                TextSpelling& spelling) const {
  size_t at = 0;
  std::string piece;
  while (at < text.size()) {
    size_t length = std::min(max_token_bytes_, text.size() - at);
    for (; length > 0; --length) {
      piece.assign(text.substr(at, length));
      auto it = ids_.find(piece);
      if (it != ids_.end()) {
        spelling.token_ids.push_back(it->second);
        spelling.byte_offsets.push_back(base_offset + at);
        break;
      }
    }
    if (length == 0) {
      spelling.is_complete = false;
      spelling.unspelled_offset = base_offset + at;
      return;
    }
    at += length;
  }
}

TextSpelling TextSpeller::spell(std::string_view text) const {
  TextSpelling spelling;
  if (tokenizer_ == nullptr) {
    spell_longest(text, 0, spelling);
    return spelling;
  }
  std::vector<int32_t> ids = tokenizer_->encode(text, {.add_bos = false});
  std::vector<size_t> offsets;
  const std::string bytes = spelled_bytes(*vocabulary_, ids, offsets);
  if (bytes == text) {
    spelling.token_ids = std::move(ids);
    spelling.byte_offsets = std::move(offsets);
    return spelling;
  }
  // SentencePiece's dummy prefix: the first token carries a space the text does not have.
  if (!ids.empty() && bytes.size() == text.size() + 1 && bytes[0] == ' ' &&
      std::string_view(bytes).substr(1) == text) {
    const std::string& first = vocabulary_->token_bytes(ids[0]);
    spell_longest(std::string_view(first).substr(1), 0, spelling);
    for (size_t i = 1; i < ids.size() && spelling.is_complete; ++i) {
      spelling.token_ids.push_back(ids[i]);
      spelling.byte_offsets.push_back(offsets[i] - 1);
    }
    return spelling;  // what a model writes after its prompt: no note
  }
  spell_longest(text, 0, spelling);
  spelling.note =
      "the tokenizer's encoding does not spell the text exactly (normalized); spelled by the "
      "longest tokens that match";
  return spelling;
}

}  // namespace sluice
