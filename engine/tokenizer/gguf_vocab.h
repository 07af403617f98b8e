// The tokenizer.ggml.* metadata of a GGUF file, read and validated once: tokens, scores, token
// types, merges, special ids and flags. GgufSpmTokenizer ("llama" vocabularies) and the
// byte-level BPE tokenizer ("gpt2" vocabularies) are built from it.
// Keys: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md#tokenizer
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/tokenizer/tokenizer.h"

namespace sluice {

class GgufFile;

struct GgufVocab {
  std::string path;                 // the GGUF file, for errors and describe()
  std::string model;                // tokenizer.ggml.model: "llama", "gpt2", ...
  std::string pre;                  // tokenizer.ggml.pre ("" when absent)
  std::vector<std::string> tokens;  // [vocab_size]
  std::vector<float> scores;        // [vocab_size], or empty when the file has none
  std::vector<TokenKind> kinds;     // [vocab_size]; Normal when token_type is absent
  std::vector<std::string> merges;  // "left right", rank = index (gpt2 only)
  int32_t bos_id = -1;
  int32_t eos_id = -1;
  int32_t unk_id = -1;
  std::optional<bool> add_bos;           // tokenizer.ggml.add_bos_token when present
  std::optional<bool> add_eos;           // tokenizer.ggml.add_eos_token when present
  std::optional<bool> add_space_prefix;  // tokenizer.ggml.add_space_prefix when present
  std::vector<int32_t> extra_stop_ids;   // end-of-turn ids besides eos_id

  // Returns the number of tokens.
  int32_t size() const { return static_cast<int32_t>(tokens.size()); }
};

// Reads the vocabulary. Throws Error naming the file and key when a key is missing, has the
// wrong type or length, or names an id outside the vocabulary.
GgufVocab read_gguf_vocab(const GgufFile& file);

// Returns the TokenKind of a llama.cpp token type (1 normal, 2 unknown, 3 control,
// 4 user-defined, 5 unused, 6 byte; 0, undefined, counts as normal); nullopt for other values.
std::optional<TokenKind> token_kind_from_gguf_type(int64_t type);

}  // namespace sluice
