// SentencePiece byte-fallback pieces: "<0x41>" stands for the single byte 0x41 and is emitted
// for characters the vocabulary lacks. Shared by every SentencePiece-style vocabulary.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

// Returns the byte a piece of the exact form "<0xNN>" (uppercase or lowercase hex) stands for.
inline std::optional<uint8_t> parse_byte_piece(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return std::nullopt;
  int value = 0;
  for (const char c : piece.substr(3, 2)) {
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (digit < 0) return std::nullopt;
    value = value * 16 + digit;
  }
  return static_cast<uint8_t>(value);
}

// Returns the byte-fallback piece for byte: "<0x0A>" for 10.
inline std::string byte_piece_name(uint8_t byte) {
  char name[8];
  std::snprintf(name, sizeof(name), "<0x%02X>", byte);
  return name;
}

}  // namespace sluice
