#include "engine/input/utf8_validation.h"

#include <cstdio>

#include "engine/core/error.h"
#include "engine/tokenizer/unicode.h"

namespace sluice {

std::optional<size_t> find_invalid_utf8(std::string_view text) {
  size_t offset = 0;
  while (offset < text.size()) {
    // ASCII is the common case in instruction files; skip it without decoding.
    if (static_cast<unsigned char>(text[offset]) < 0x80) {
      ++offset;
      continue;
    }
    const Utf8Char decoded = decode_utf8(text, offset);
    if (decoded.status != Utf8Status::Valid) return offset;
    offset += decoded.num_bytes;
  }
  return std::nullopt;
}

std::string describe_invalid_utf8(std::string_view text, size_t offset) {
  char hex[8];
  std::snprintf(hex, sizeof(hex), "0x%02X", static_cast<unsigned char>(text[offset]));
  const bool truncated = decode_utf8(text, offset).status == Utf8Status::Incomplete;
  return str_cat("invalid UTF-8 (byte ", hex, truncated ? ", a truncated sequence)" : ")");
}

}  // namespace sluice
