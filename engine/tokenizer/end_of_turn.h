// Control tokens that end a chat turn in common model families (<|eot_id|>, <|im_end|>, ...).
// Files that predate explicit end-of-turn metadata mark them only by text, so loaders recognise
// them by name, as llama.cpp does.
#pragma once

#include <string_view>

namespace sluice {

// Returns true when text is a known end-of-turn marker.
inline bool is_end_of_turn_marker(std::string_view text) {
  for (const std::string_view marker :
       {"<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
        "<|end_of_text|>", "<|return|>", "<|END_OF_TURN_TOKEN|>"}) {
    if (text == marker) return true;
  }
  return false;
}

}  // namespace sluice
