// Tokenizer factories: by file content, from a GGUF file, from a Hugging Face model directory.
// Every failure is a sluice::Error naming the file: missing, unreadable or corrupt, an
// unsupported vocabulary, or a vocabulary that does not fit the model.
#pragma once

#include <memory>
#include <string>

#include "engine/tokenizer/tokenizer.h"

namespace sluice {

class GgufFile;

// Loads a tokenizer, detecting the format by content: a SentencePiece .model, a llama2.c
// tokenizer.bin, a GGUF file (its embedded vocabulary) or a Hugging Face tokenizer.json; a
// directory is loaded with load_hf_tokenizer. expected_vocab_size >= 0 is the model's vocab
// size: the tokenizer must have exactly that many tokens (a Hugging Face tokenizer may have
// fewer, for models with padded embeddings), else Error names both numbers and the file.
std::unique_ptr<Tokenizer> load_tokenizer_file(const std::string& path,
                                               int expected_vocab_size = -1);

// Returns the tokenizer of a GGUF file's tokenizer.ggml.* metadata ("llama" or "gpt2").
std::unique_ptr<Tokenizer> load_gguf_tokenizer(const GgufFile& file);

// Loads a Hugging Face model directory's tokenizer: tokenizer.model with tokenizer_config.json
// (add_bos_token, add_eos_token, bos_token, eos_token, added_tokens_decoder) and
// generation_config.json (extra eos ids), or tokenizer.json (byte-level BPE) when there is no
// tokenizer.model. expected_vocab_size as for load_tokenizer_file.
std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& dir, int expected_vocab_size = -1);

}  // namespace sluice
