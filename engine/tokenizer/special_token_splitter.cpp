#include "engine/tokenizer/special_token_splitter.h"

#include <algorithm>

namespace sluice {

SpecialTokenSplitter::SpecialTokenSplitter(std::vector<SpecialToken> tokens) {
  std::erase_if(tokens, [](const SpecialToken& token) { return token.text.empty(); });
  // Longest first so the first match at a position is the longest; ties by id for a stable order.
  std::sort(tokens.begin(), tokens.end(), [](const SpecialToken& a, const SpecialToken& b) {
    if (a.text.size() != b.text.size()) return a.text.size() > b.text.size();
    return a.id < b.id;
  });
  tokens_ = std::move(tokens);
  for (uint32_t i = 0; i < tokens_.size(); ++i) {
    by_first_byte_[static_cast<uint8_t>(tokens_[i].text[0])].push_back(i);
  }
}

std::vector<TextFragment> SpecialTokenSplitter::split(std::string_view text,
                                                      bool parse_special) const {
  std::vector<TextFragment> fragments;
  size_t raw_start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const SpecialToken* match = nullptr;
    for (const uint32_t index : by_first_byte_[static_cast<uint8_t>(text[pos])]) {
      const SpecialToken& token = tokens_[index];
      if (!token.is_always_split && !parse_special) continue;
      if (text.substr(pos, token.text.size()) == token.text) {
        match = &token;
        break;
      }
    }
    if (match == nullptr) {
      ++pos;
      continue;
    }
    if (pos > raw_start) fragments.push_back({text.substr(raw_start, pos - raw_start), -1});
    fragments.push_back({text.substr(pos, match->text.size()), match->id});
    pos += match->text.size();
    raw_start = pos;
  }
  if (raw_start < text.size()) fragments.push_back({text.substr(raw_start), -1});
  return fragments;
}

}  // namespace sluice
