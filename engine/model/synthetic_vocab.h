// A made-up SentencePiece vocabulary of a given size, for model files whose weights are random
// (dummy models saved as GGUF): llama.cpp and Sluice load it as a "llama" tokenizer and can
// tokenize any text with it, byte by byte where no piece matches.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice {

// llama.cpp's token types (tokenizer.ggml.token_type).
enum class TokenType : int32_t { Normal = 1, Unknown = 2, Control = 3, Byte = 6 };

struct SyntheticVocab {
  std::vector<std::string> tokens;   // unique
  std::vector<float> scores;         // higher merges first
  std::vector<int32_t> token_types;  // TokenType values
  int unk_id = 0;
  int bos_id = 1;
  int eos_id = 2;
};

// Returns vocab_size tokens: "<s>" and "</s>" at bos_id and eos_id (1 and 2 when outside the
// vocabulary), "<unk>" at the first id left, the 256 byte tokens "<0x00>" ... "<0xFF>" (the
// fallback of llama.cpp's SentencePiece tokenizer, which also finds the newline among them),
// then "▁", the printable ASCII characters and "▁a", "▁b", ..., "▁aa", ... with falling scores.
// Throws Error when vocab_size cannot hold the special and byte tokens.
SyntheticVocab make_synthetic_vocab(int vocab_size, int bos_id, int eos_id);

}  // namespace sluice
