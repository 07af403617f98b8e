// Hugging Face tokenizer.json for byte-level BPE models (GPT-2, Llama 3, Qwen2, SmolLM...):
// model.vocab, model.merges, model.ignore_merges, added_tokens, and a pre_tokenizer recognised
// as one of those pre_tokenizer.h implements. SentencePiece-style tokenizer.json files
// (byte_fallback BPE, as Llama 2 and Mistral ship beside tokenizer.model) are refused: their
// tokenizer.model is the file to load.
#pragma once

#include <memory>
#include <string>

#include "engine/tokenizer/bpe_tokenizer.h"
#include "engine/tokenizer/hf_tokenizer_config.h"

namespace sluice {

// Loads tokenizer.json; config (tokenizer_config.json, possibly empty) supplies bos_token,
// eos_token, add_bos_token and add_eos_token. Throws Error naming the file and the key at fault.
std::unique_ptr<BpeTokenizer> load_hf_tokenizer_json(const std::string& path,
                                                     const HfTokenizerConfig& config);

}  // namespace sluice
