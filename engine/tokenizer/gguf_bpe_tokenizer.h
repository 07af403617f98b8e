// Builds the byte-level BPE tokenizer of a GGUF "gpt2" vocabulary: tokens, merges and token
// types from the file, the pre-tokenizer chosen by tokenizer.ggml.pre, and llama.cpp's defaults
// where a key is absent (no BOS unless add_bos_token says so, except Llama 3's pre-tokenizer).
#pragma once

#include <memory>

#include "engine/tokenizer/bpe_tokenizer.h"
#include "engine/tokenizer/gguf_vocab.h"

namespace sluice {

// Returns the tokenizer. Throws Error naming the file and key when merges are missing or the
// pre-tokenizer is one Sluice does not implement.
std::unique_ptr<BpeTokenizer> make_gguf_bpe_tokenizer(GgufVocab vocab);

}  // namespace sluice
