#include "engine/tokenizer/gguf_spm_tokenizer.h"

#include <algorithm>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/tokenizer/byte_piece.h"
#include "engine/tokenizer/symbol_merger.h"
#include "engine/tokenizer/unicode.h"

namespace sluice {

namespace {

constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";       // U+2581 "▁"
constexpr std::string_view kUnknownSurface = " \xE2\x81\x87 ";  // libsentencepiece's " ⁇ "

std::string escape_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  for (const char c : text) {
    if (c == ' ') {
      out.append(kSpaceSymbol);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string unescape_spaces(std::string_view piece) {
  std::string out;
  for (size_t found; (found = piece.find(kSpaceSymbol)) != std::string_view::npos;) {
    out.append(piece.substr(0, found)).push_back(' ');
    piece.remove_prefix(found + kSpaceSymbol.size());
  }
  out.append(piece);
  return out;
}

}  // namespace

GgufSpmTokenizer::GgufSpmTokenizer(GgufVocab vocab) : vocab_(std::move(vocab)) {
  if (vocab_.scores.size() != vocab_.tokens.size()) {
    fail(vocab_.path, ": a \"llama\" vocabulary needs tokenizer.ggml.scores (one per token)");
  }
  add_bos_ = vocab_.add_bos.value_or(true);
  add_space_prefix_ = vocab_.add_space_prefix.value_or(true);

  std::unordered_map<std::string, int32_t> byte_piece_ids;
  std::vector<SpecialToken> specials;
  for (int32_t id = 0; id < vocab_.size(); ++id) {
    const std::string& piece = vocab_.tokens[id];
    max_token_bytes_ = std::max(max_token_bytes_, piece.size());
    switch (vocab_.kinds[id]) {
      case TokenKind::Normal:
        mergeable_ids_.emplace(piece, id);
        break;
      case TokenKind::UserDefined:
        mergeable_ids_.emplace(piece, id);
        specials.push_back({piece, id, true});
        break;
      case TokenKind::Byte:
        byte_piece_ids.emplace(piece, id);
        break;
      case TokenKind::Control:
      case TokenKind::Unknown:
        specials.push_back({piece, id, false});
        break;
      case TokenKind::Unused:
        break;
    }
  }
  for (int byte = 0; byte < 256; ++byte) {
    const auto it = byte_piece_ids.find(byte_piece_name(static_cast<uint8_t>(byte)));
    byte_ids_[byte] = it != byte_piece_ids.end() ? it->second : vocab_.unk_id;
    if (byte_ids_[byte] < 0) max_token_bytes_ = 0;
  }
  special_tokens_ = SpecialTokenSplitter(std::move(specials));
}

int32_t GgufSpmTokenizer::find_mergeable(const std::string& piece) const {
  const auto it = mergeable_ids_.find(piece);
  return it == mergeable_ids_.end() ? -1 : it->second;
}

std::vector<int32_t> GgufSpmTokenizer::encode(std::string_view text,
                                              const EncodeOptions& options) const {
  std::vector<int32_t> ids;
  if (options.add_bos && vocab_.bos_id >= 0) ids.push_back(vocab_.bos_id);
  for (const TextFragment& fragment : special_tokens_.split(text, options.parse_special)) {
    if (fragment.is_token()) {
      ids.push_back(fragment.token_id);
    } else {
      encode_text(fragment.text, ids);
    }
  }
  if (options.add_eos && vocab_.eos_id >= 0) ids.push_back(vocab_.eos_id);
  return ids;
}

void GgufSpmTokenizer::encode_text(std::string_view text, std::vector<int32_t>& ids) const {
  if (text.empty()) return;
  // Every raw fragment starts a new SentencePiece "sentence" (as each libsentencepiece Encode
  // call does), so each one gets the dummy prefix.
  std::string prefixed(add_space_prefix_ ? " " : "");
  prefixed.append(text);
  const std::string escaped = escape_spaces(prefixed);
  std::vector<std::string> symbols;
  for (size_t offset = 0; offset < escaped.size();) {
    // Ill-formed bytes become symbols of their own; they end up as byte pieces.
    const Utf8Char c = decode_utf8(escaped, offset);
    symbols.push_back(escaped.substr(offset, c.num_bytes));
    offset += c.num_bytes;
  }

  std::string merged;  // reused across calls to avoid an allocation per candidate pair
  const auto priority = [&](std::string_view left,
                            std::string_view right) -> std::optional<double> {
    merged.assign(left).append(right);
    const int32_t id = find_mergeable(merged);
    if (id < 0) return std::nullopt;
    return vocab_.scores[id];
  };
  for (const std::string& symbol : merge_symbols(std::move(symbols), priority)) {
    const int32_t id = find_mergeable(symbol);
    if (id >= 0) {
      ids.push_back(id);
      continue;
    }
    for (const char byte : symbol) {
      const int32_t byte_id = byte_ids_[static_cast<uint8_t>(byte)];
      if (byte_id >= 0) ids.push_back(byte_id);  // a vocabulary with neither bytes nor unk drops it
    }
  }
}

std::string GgufSpmTokenizer::token_to_bytes(int32_t id, bool at_sequence_start) const {
  if (id < 0 || id >= vocab_size()) return "";
  const std::string& piece = vocab_.tokens[id];
  switch (vocab_.kinds[id]) {
    case TokenKind::Normal: {
      std::string text = unescape_spaces(piece);
      if (at_sequence_start && add_space_prefix_ && !text.empty() && text[0] == ' ') {
        text.erase(0, 1);
      }
      return text;
    }
    case TokenKind::Byte: {
      const auto byte = parse_byte_piece(piece);
      return byte ? std::string(1, static_cast<char>(*byte)) : "";
    }
    case TokenKind::UserDefined:
      return piece;
    case TokenKind::Unknown:
      return std::string(kUnknownSurface);
    case TokenKind::Control:
    case TokenKind::Unused:
      return "";
  }
  return "";
}

std::string GgufSpmTokenizer::token_text(int32_t id) const {
  return id >= 0 && id < vocab_size() ? vocab_.tokens[id] : "";
}

TokenKind GgufSpmTokenizer::token_kind(int32_t id) const {
  return id >= 0 && id < vocab_size() ? vocab_.kinds[id] : TokenKind::Unused;
}

std::string GgufSpmTokenizer::describe() const {
  return str_cat("gguf llama vocabulary ", std::filesystem::path(vocab_.path).filename().string(),
                 " (", vocab_size(), " tokens)");
}

}  // namespace sluice
