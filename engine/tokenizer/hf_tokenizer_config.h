// The tokenizer settings of a Hugging Face model directory: tokenizer_config.json (add_bos_token,
// add_eos_token, bos_token/eos_token as a string or an {"content": ...} object, and
// added_tokens_decoder) and generation_config.json's eos_token_id (one id or a list).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/tokenizer/added_token.h"

namespace sluice {

struct HfTokenizerConfig {
  std::optional<bool> add_bos_token;
  std::optional<bool> add_eos_token;
  std::optional<std::string> bos_token;  // "" when the file says null
  std::optional<std::string> eos_token;  // "" when the file says null
  std::vector<AddedToken> added_tokens;  // from added_tokens_decoder
};

// Reads tokenizer_config.json. Throws Error naming the file and key on malformed JSON or a value
// of the wrong type.
HfTokenizerConfig read_hf_tokenizer_config(const std::string& path);

// Returns the eos_token_id values of generation_config.json (empty when the key is absent).
// Throws Error naming the file on malformed JSON or ids that are not non-negative integers.
std::vector<int32_t> read_hf_generation_eos_ids(const std::string& path);

}  // namespace sluice
