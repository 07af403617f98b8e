// A token added on top of a base vocabulary (Hugging Face added_tokens / added_tokens_decoder):
// chat markers such as <|im_start|>, or the base model's own <s> and </s> listed again.
#pragma once

#include <cstdint>
#include <string>

namespace sluice {

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool is_special = false;  // special tokens are control tokens: decoded to nothing, split only
                            // with EncodeOptions::parse_special
};

}  // namespace sluice
