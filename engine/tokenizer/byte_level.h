// GPT-2's byte-level alphabet: each of the 256 byte values is written as one printable Unicode
// character (printable Latin-1 bytes as themselves, the rest as U+0100 onwards), so that BPE
// can work on text while still covering every byte string. A space becomes "Ġ" (U+0120) and a
// newline "Ċ" (U+010A) in the vocabulary.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

// Returns the character that stands for byte.
char32_t byte_to_byte_level(uint8_t byte);

// Returns the byte a character of the alphabet stands for; nullopt for other characters.
std::optional<uint8_t> byte_level_to_byte(char32_t codepoint);

// Returns bytes written in the byte-level alphabet (UTF-8).
std::string encode_byte_level(std::string_view bytes);

// Returns the bytes that byte-level text stands for. Characters outside the alphabet (never in
// a well-formed byte-level vocabulary) are copied through as their UTF-8.
std::string decode_byte_level(std::string_view text);

}  // namespace sluice
