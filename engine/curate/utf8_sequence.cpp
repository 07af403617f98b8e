#include "engine/curate/utf8_sequence.h"

#include <cassert>

namespace sluice {

Utf8Sequence utf8_sequence_at(std::string_view text, size_t i) {
  assert(i < text.size());
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0x80) return {1, lead};
  size_t length = 0;
  uint32_t code_point = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07u;
  } else {
    return {};
  }
  if (i + length > text.size()) return {};
  for (size_t k = 1; k < length; ++k) {
    const auto c = static_cast<unsigned char>(text[i + k]);
    if ((c & 0xC0) != 0x80) return {};
    code_point = (code_point << 6) | (c & 0x3Fu);
  }
  const bool is_overlong =
      (length == 3 && code_point < 0x800) || (length == 4 && code_point < 0x10000);
  const bool is_surrogate = code_point >= 0xD800 && code_point <= 0xDFFF;
  if (is_overlong || is_surrogate || code_point > 0x10FFFF) return {};
  return {length, code_point};
}

}  // namespace sluice
