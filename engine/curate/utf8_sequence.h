// UTF-8 read one sequence at a time, for code that must keep invalid bytes as they are (the
// normalisation of text_normalize.h) or replace them (html_escape.h) but never split a valid
// character. Overlong forms, surrogates and code points past U+10FFFF are invalid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sluice {

struct Utf8Sequence {
  size_t length = 0;        // bytes of the valid sequence at the position; 0: an invalid byte
  uint32_t code_point = 0;  // meaningful when length > 0
};

// Returns the sequence that starts at text[i]. Precondition: i < text.size().
Utf8Sequence utf8_sequence_at(std::string_view text, size_t i);

}  // namespace sluice
