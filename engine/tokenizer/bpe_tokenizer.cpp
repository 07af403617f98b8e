#include "engine/tokenizer/bpe_tokenizer.h"

#include <algorithm>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/tokenizer/byte_level.h"
#include "engine/tokenizer/symbol_merger.h"
#include "engine/tokenizer/unicode.h"

namespace sluice {

BpeTokenizer::BpeTokenizer(BpeVocab vocab) : vocab_(std::move(vocab)) {
  if (vocab_.kinds.size() != vocab_.tokens.size()) {
    fail(vocab_.source, ": ", vocab_.tokens.size(), " tokens but ", vocab_.kinds.size(),
         " token types");
  }
  if (vocab_.bos_id >= vocab_size() || vocab_.eos_id >= vocab_size()) {
    fail(vocab_.source, ": BOS id ", vocab_.bos_id, " or EOS id ", vocab_.eos_id,
         " is outside the vocabulary of ", vocab_size(), " tokens");
  }
  std::vector<SpecialToken> specials;
  for (int32_t id = 0; id < vocab_size(); ++id) {
    const std::string& token = vocab_.tokens[id];
    if (token.empty()) continue;
    token_ids_.emplace(token, id);  // the lowest id wins should a text repeat
    max_token_bytes_ = std::max(max_token_bytes_, token.size());
    const TokenKind kind = vocab_.kinds[id];
    if (kind == TokenKind::Control || kind == TokenKind::UserDefined) {
      specials.push_back({token, id, kind == TokenKind::UserDefined});
    }
  }
  merge_ranks_.reserve(vocab_.merges.size());
  for (size_t rank = 0; rank < vocab_.merges.size(); ++rank) {
    const std::string& merge = vocab_.merges[rank];
    // Symbols never contain a space (it is "Ġ" in the alphabet), but a symbol may be "Ġ" glyphs
    // only, so look for the separator after the first character as llama.cpp does.
    const size_t separator = merge.find(' ', 1);
    if (separator == std::string::npos || separator + 1 >= merge.size()) {
      fail(vocab_.source, ": merge ", rank, " ('", merge, "') is not two space-separated symbols");
    }
    merge_ranks_.emplace(merge, static_cast<int32_t>(rank));  // the first (best) rank wins
  }
  special_tokens_ = SpecialTokenSplitter(std::move(specials));
  for (int byte = 0; byte < 256; ++byte) {
    if (token_id(encode_byte_level(std::string(1, static_cast<char>(byte)))) < 0)
      max_token_bytes_ = 0;
  }
}

int32_t BpeTokenizer::token_id(const std::string& text) const {
  const auto it = token_ids_.find(text);
  return it == token_ids_.end() ? -1 : it->second;
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text,
                                          const EncodeOptions& options) const {
  std::vector<int32_t> ids;
  if (options.add_bos && vocab_.bos_id >= 0) ids.push_back(vocab_.bos_id);
  for (const TextFragment& fragment : special_tokens_.split(text, options.parse_special)) {
    if (fragment.is_token()) {
      ids.push_back(fragment.token_id);
      continue;
    }
    for (const std::string_view word : pre_tokenize(fragment.text, vocab_.pre_tokenizer)) {
      encode_word(word, ids);
    }
  }
  if (options.add_eos && vocab_.eos_id >= 0) ids.push_back(vocab_.eos_id);
  return ids;
}

void BpeTokenizer::encode_word(std::string_view word, std::vector<int32_t>& ids) const {
  const std::string mapped = encode_byte_level(word);
  if (vocab_.ignore_merges) {
    if (const int32_t id = token_id(mapped); id >= 0) {
      ids.push_back(id);
      return;
    }
  }
  std::vector<std::string> symbols;
  for (size_t offset = 0; offset < mapped.size();) {
    const Utf8Char c = decode_utf8(mapped, offset);  // always valid: the alphabet is UTF-8
    symbols.push_back(mapped.substr(offset, c.num_bytes));
    offset += c.num_bytes;
  }
  std::string key;  // reused across calls to avoid an allocation per candidate pair
  const auto priority = [&](std::string_view left,
                            std::string_view right) -> std::optional<double> {
    key.assign(left).append(" ").append(right);
    const auto it = merge_ranks_.find(key);
    if (it == merge_ranks_.end()) return std::nullopt;
    return -static_cast<double>(it->second);  // the lowest rank merges first
  };
  for (const std::string& symbol : merge_symbols(std::move(symbols), priority)) {
    if (const int32_t id = token_id(symbol); id >= 0) {
      ids.push_back(id);
      continue;
    }
    // A merge whose result is missing from the vocabulary (a broken file): fall back to the
    // single-byte tokens, which every byte-level vocabulary has.
    for (size_t offset = 0; offset < symbol.size();) {
      const Utf8Char c = decode_utf8(symbol, offset);
      const int32_t id = token_id(symbol.substr(offset, c.num_bytes));
      if (id >= 0) ids.push_back(id);
      offset += c.num_bytes;
    }
  }
}

std::string BpeTokenizer::token_to_bytes(int32_t id, bool /*at_sequence_start*/) const {
  if (id < 0 || id >= vocab_size()) return "";
  switch (vocab_.kinds[id]) {
    case TokenKind::Normal:
    case TokenKind::Byte:
      return decode_byte_level(vocab_.tokens[id]);
    case TokenKind::UserDefined:
      return vocab_.tokens[id];  // added tokens are stored as text
    case TokenKind::Control:
    case TokenKind::Unknown:
    case TokenKind::Unused:
      return "";
  }
  return "";
}

std::string BpeTokenizer::token_text(int32_t id) const {
  return id >= 0 && id < vocab_size() ? vocab_.tokens[id] : "";
}

TokenKind BpeTokenizer::token_kind(int32_t id) const {
  return id >= 0 && id < vocab_size() ? vocab_.kinds[id] : TokenKind::Unused;
}

std::string BpeTokenizer::describe() const {
  return str_cat("byte-level BPE ", std::filesystem::path(vocab_.source).filename().string(), " (",
                 vocab_size(), " tokens, ", vocab_.merges.size(), " merges, pre-tokenizer ",
                 pre_tokenizer_name(vocab_.pre_tokenizer), ")");
}

}  // namespace sluice
