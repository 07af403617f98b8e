#include "engine/tokenizer/gguf_vocab.h"

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"
#include "engine/model/gguf_reader.h"
#include "engine/tokenizer/end_of_turn.h"

namespace sluice {

namespace {

// Reads an optional id key; -1 when absent. Throws naming the key when it is outside the vocab.
int32_t read_id(const GgufFile& file, const std::string& key, int32_t vocab_size,
                int32_t fallback) {
  const int64_t id = file.get_int_or(key, fallback);
  if (id < -1 || id >= vocab_size) {
    fail(file.path(), ": metadata ", key, " is ", id, ", outside the vocabulary of ", vocab_size,
         " tokens");
  }
  return static_cast<int32_t>(id);
}

std::optional<bool> read_optional_bool(const GgufFile& file, const std::string& key) {
  if (!file.has(key)) return std::nullopt;
  return file.get_bool(key);
}

void read_scores_and_kinds(const GgufFile& file, GgufVocab& vocab) {
  const size_t vocab_size = vocab.tokens.size();
  if (file.has("tokenizer.ggml.scores")) {
    const auto& scores = file.get_number_array("tokenizer.ggml.scores");
    if (scores.size() != vocab_size) {
      fail(file.path(), ": metadata tokenizer.ggml.scores has ", scores.size(),
           " entries but tokenizer.ggml.tokens has ", vocab_size);
    }
    vocab.scores.assign(scores.begin(), scores.end());
  }
  vocab.kinds.assign(vocab_size, TokenKind::Normal);
  if (file.has("tokenizer.ggml.token_type")) {
    const auto& types = file.get_number_array("tokenizer.ggml.token_type");
    if (types.size() != vocab_size) {
      fail(file.path(), ": metadata tokenizer.ggml.token_type has ", types.size(),
           " entries but tokenizer.ggml.tokens has ", vocab_size);
    }
    for (size_t id = 0; id < vocab_size; ++id) {
      // Types may be stored as floats: only whole numbers in range may become an integer.
      const double type = types[id];
      const bool is_whole = type >= 0 && type <= 255 && type == std::floor(type);
      const auto kind =
          is_whole ? token_kind_from_gguf_type(static_cast<int64_t>(type)) : std::nullopt;
      if (!kind) {
        fail(file.path(), ": metadata tokenizer.ggml.token_type[", id, "] is ", types[id],
             ", not a token type (0..6)");
      }
      vocab.kinds[id] = *kind;
    }
  }
}

void collect_extra_stop_ids(const GgufFile& file, GgufVocab& vocab) {
  std::vector<int32_t> ids;
  for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
    const int32_t id = read_id(file, key, vocab.size(), -1);
    if (id >= 0) ids.push_back(id);
  }
  for (int32_t id = 0; id < vocab.size(); ++id) {
    if (vocab.kinds[id] != TokenKind::Control) continue;
    if (is_end_of_turn_marker(vocab.tokens[id])) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::erase(ids, vocab.eos_id);
  vocab.extra_stop_ids = std::move(ids);
}

}  // namespace

std::optional<TokenKind> token_kind_from_gguf_type(int64_t type) {
  switch (type) {
    case 0:
    case 1:
      return TokenKind::Normal;
    case 2:
      return TokenKind::Unknown;
    case 3:
      return TokenKind::Control;
    case 4:
      return TokenKind::UserDefined;
    case 5:
      return TokenKind::Unused;
    case 6:
      return TokenKind::Byte;
    default:
      return std::nullopt;
  }
}

GgufVocab read_gguf_vocab(const GgufFile& file) {
  GgufVocab vocab;
  vocab.path = file.path();
  vocab.model = file.get_string("tokenizer.ggml.model");
  vocab.pre = file.get_string_or("tokenizer.ggml.pre", "");
  vocab.tokens = file.get_string_array("tokenizer.ggml.tokens");
  if (vocab.tokens.empty()) fail(file.path(), ": metadata tokenizer.ggml.tokens is empty");
  if (vocab.tokens.size() > static_cast<size_t>(INT32_MAX)) {
    fail(file.path(), ": metadata tokenizer.ggml.tokens has too many entries");
  }
  read_scores_and_kinds(file, vocab);
  if (file.has("tokenizer.ggml.merges"))
    vocab.merges = file.get_string_array("tokenizer.ggml.merges");

  // llama.cpp's defaults when a key is absent: SentencePiece vocabularies put <unk>, <s>, </s>
  // at 0, 1, 2; byte-level BPE ones have no unk and (in GPT-2) one <|endoftext|> for both.
  const bool is_spm = vocab.model == "llama";
  vocab.unk_id = read_id(file, "tokenizer.ggml.unknown_token_id", vocab.size(), is_spm ? 0 : -1);
  vocab.bos_id = read_id(file, "tokenizer.ggml.bos_token_id", vocab.size(), is_spm ? 1 : -1);
  vocab.eos_id = read_id(file, "tokenizer.ggml.eos_token_id", vocab.size(), is_spm ? 2 : -1);
  vocab.add_bos = read_optional_bool(file, "tokenizer.ggml.add_bos_token");
  vocab.add_eos = read_optional_bool(file, "tokenizer.ggml.add_eos_token");
  vocab.add_space_prefix = read_optional_bool(file, "tokenizer.ggml.add_space_prefix");
  collect_extra_stop_ids(file, vocab);
  return vocab;
}

}  // namespace sluice
