#include "engine/tokenizer/llama2c_tokenizer.h"

#include <cstring>

#include "engine/core/byte_reader.h"
#include "engine/core/error.h"
#include "engine/core/mapped_file.h"
#include "engine/tokenizer/byte_piece.h"
#include "engine/tokenizer/symbol_merger.h"

namespace sluice {

namespace {

// run.c starts its best-pair search at -1e10, so a pair whose merged piece scores at or below
// that never merges; keeping the threshold keeps ids identical to run.c.
constexpr float kRunCMinScore = -1e10f;

// Longest piece we accept; a larger max_token_length means the file is not a tokenizer.bin.
constexpr int32_t kMaxPlausibleTokenLength = 1 << 16;

bool is_continuation_byte(char c) {
  return (static_cast<uint8_t>(c) & 0xC0) == 0x80;
}

}  // namespace

std::unique_ptr<Llama2cTokenizer> Llama2cTokenizer::load(const std::string& path,
                                                         int32_t expected_vocab_size) {
  const auto file = MappedFile::open(path);
  return parse({file->data(), file->size()}, path, expected_vocab_size);
}

std::unique_ptr<Llama2cTokenizer> Llama2cTokenizer::parse(std::span<const uint8_t> bytes,
                                                          const std::string& path,
                                                          int32_t expected_vocab_size) {
  ByteReader reader(bytes.data(), bytes.size(), path);
  if (bytes.size() < sizeof(int32_t)) {
    fail(path, ": not a llama2.c tokenizer.bin: ", bytes.size(),
         " bytes is too short for the max_token_length header");
  }
  const auto max_token_length = reader.read<int32_t>("max_token_length");
  if (max_token_length <= 0 || max_token_length > kMaxPlausibleTokenLength) {
    fail(path, ": not a llama2.c tokenizer.bin: max_token_length is ", max_token_length);
  }

  std::vector<std::string> pieces;
  std::vector<float> scores;
  while (reader.remaining() > 0) {
    const size_t index = pieces.size();
    const std::string token = str_cat("token ", index);
    const auto score = reader.read<float>(token + " score");
    const auto length = reader.read<int32_t>(token + " length");
    if (length < 0) fail(path, ": token ", index, " has a negative length (", length, ")");
    if (length > max_token_length) {
      fail(path, ": token ", index, " is ", length, " bytes, longer than max_token_length ",
           max_token_length);
    }
    if (static_cast<size_t>(length) > reader.remaining()) {
      fail(path, ": token ", index, " (", length, " bytes at offset ", reader.offset(),
           ") runs past the end of the file (", bytes.size(), " bytes): the file is truncated");
    }
    pieces.push_back(reader.read_bytes(static_cast<size_t>(length), token + " bytes"));
    scores.push_back(score);
  }
  if (pieces.size() <= kEosId) {
    fail(path, ": llama2.c tokenizer.bin holds ", pieces.size(),
         " tokens; it needs at least <unk>, BOS and EOS");
  }
  if (expected_vocab_size >= 0 && pieces.size() != static_cast<size_t>(expected_vocab_size)) {
    fail(path, ": vocab size mismatch: the tokenizer holds ", pieces.size(),
         " tokens but the model's vocab_size is ", expected_vocab_size);
  }
  return std::unique_ptr<Llama2cTokenizer>(
      new Llama2cTokenizer(std::move(pieces), std::move(scores), max_token_length));
}

bool Llama2cTokenizer::looks_like_llama2c_tokenizer(std::span<const uint8_t> bytes) {
  // A plausible header and the first records framed correctly (<unk>, BOS, EOS in every
  // exported file); later damage is then reported by parse() with the token index.
  constexpr int kNumRecordsChecked = 3;
  const auto read_int32 = [&](size_t offset) {
    int32_t value = 0;
    std::memcpy(&value, bytes.data() + offset, sizeof(value));
    return value;
  };
  if (bytes.size() < 4) return false;
  const int32_t max_token_length = read_int32(0);
  if (max_token_length <= 0 || max_token_length > kMaxPlausibleTokenLength) return false;
  size_t offset = 4;
  for (int record = 0; record < kNumRecordsChecked; ++record) {
    if (bytes.size() - offset < 8) return false;
    const int32_t length = read_int32(offset + 4);
    if (length < 0 || length > max_token_length) return false;
    offset += 8 + static_cast<size_t>(length);
    if (offset > bytes.size()) return false;
  }
  return true;
}

Llama2cTokenizer::Llama2cTokenizer(std::vector<std::string> pieces, std::vector<float> scores,
                                   int32_t max_token_length)
    : pieces_(std::move(pieces)), scores_(std::move(scores)), max_token_length_(max_token_length) {
  is_byte_piece_.resize(pieces_.size(), false);
  for (int32_t id = 0; id < vocab_size(); ++id) {
    // Duplicates do not occur in exported vocabularies; keep the lowest id if one ever does.
    piece_ids_.emplace(pieces_[id], id);
    if (parse_byte_piece(pieces_[id])) is_byte_piece_[id] = true;
  }
  // run.c uses id = byte + 3, which is where llama2.c's exporter puts <0x00>..<0xFF>; looking
  // the pieces up gives the same ids there and stays correct for vocabularies laid out otherwise.
  for (int byte = 0; byte < 256; ++byte) {
    const int32_t id = find_piece(byte_piece_name(static_cast<uint8_t>(byte)));
    byte_ids_[byte] = id >= 0 ? id : kUnkId;
  }
  // The file stores BOS/EOS as "\n<s>\n"; the text a user or chat template writes is "<s>".
  special_tokens_ = SpecialTokenSplitter(
      {{"<unk>", kUnkId, false}, {"<s>", kBosId, false}, {"</s>", kEosId, false}});
}

int32_t Llama2cTokenizer::find_piece(const std::string& piece) const {
  const auto it = piece_ids_.find(piece);
  return it == piece_ids_.end() ? -1 : it->second;
}

std::vector<int32_t> Llama2cTokenizer::encode(std::string_view text,
                                              const EncodeOptions& options) const {
  std::vector<int32_t> ids;
  if (options.add_bos) ids.push_back(kBosId);
  for (const TextFragment& fragment : special_tokens_.split(text, options.parse_special)) {
    if (fragment.is_token()) {
      ids.push_back(fragment.token_id);
    } else {
      encode_text(fragment.text, ids);
    }
  }
  if (options.add_eos) ids.push_back(kEosId);
  return ids;
}

void Llama2cTokenizer::encode_text(std::string_view text, std::vector<int32_t>& ids) const {
  if (text.empty()) return;
  std::vector<std::string> symbols;
  const auto add_symbol = [&](std::string_view codepoint) {
    if (piece_ids_.contains(std::string(codepoint))) {
      symbols.emplace_back(codepoint);
    } else {
      for (const char byte : codepoint) {
        symbols.push_back(pieces_[byte_ids_[static_cast<uint8_t>(byte)]]);
      }
    }
  };
  // run.c's dummy prefix: SentencePiece's add_dummy_prefix, a space piece before the text.
  add_symbol(" ");
  for (size_t start = 0; start < text.size();) {
    // run.c groups a byte with the continuation bytes after it, at most 4 bytes per group.
    size_t end = start + 1;
    while (end < text.size() && end - start < 4 && is_continuation_byte(text[end])) ++end;
    add_symbol(text.substr(start, end - start));
    start = end;
  }

  std::string merged;  // reused across calls to avoid an allocation per candidate pair
  const auto priority = [&](std::string_view left,
                            std::string_view right) -> std::optional<double> {
    merged.assign(left).append(right);
    const int32_t id = find_piece(merged);
    if (id < 0 || scores_[id] <= kRunCMinScore) return std::nullopt;
    return scores_[id];
  };
  for (const std::string& symbol : merge_symbols(std::move(symbols), priority)) {
    // Every symbol is a vocabulary piece: initial ones were looked up, merged ones must exist.
    ids.push_back(find_piece(symbol));
  }
}

std::string Llama2cTokenizer::token_to_bytes(int32_t id, bool at_sequence_start) const {
  if (id < 0 || id >= vocab_size() || id == kBosId || id == kEosId) return "";
  std::string_view piece = pieces_[id];
  // run.c: "following BOS token, sentencepiece decoder strips any leading whitespace".
  if (at_sequence_start && !piece.empty() && piece[0] == ' ') piece.remove_prefix(1);
  if (is_byte_piece_[id]) return std::string(1, static_cast<char>(*parse_byte_piece(piece)));
  return std::string(piece);
}

std::string Llama2cTokenizer::token_text(int32_t id) const {
  return id >= 0 && id < vocab_size() ? pieces_[id] : "";
}

TokenKind Llama2cTokenizer::token_kind(int32_t id) const {
  if (id == kUnkId) return TokenKind::Unknown;
  if (id == kBosId || id == kEosId) return TokenKind::Control;
  if (id >= 0 && id < vocab_size() && is_byte_piece_[id]) return TokenKind::Byte;
  return TokenKind::Normal;
}

std::string Llama2cTokenizer::describe() const {
  return str_cat("llama2.c tokenizer.bin (", vocab_size(), " tokens)");
}

}  // namespace sluice
