// UTF-8 decoding and encoding, and the Unicode character classes that tokenizer pre-tokenizers
// use (\p{L}, \p{N}, \s). Decoding never throws: tokenizers must accept any byte string, so
// ill-formed input is reported per sequence and the caller decides (byte fallback, U+FFFD).
// Ill-formed sequences are measured as "maximal subparts" (Unicode Standard, section 3.9),
// the same rule browsers and Python use when they substitute U+FFFD.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice {

inline constexpr char32_t kReplacementCharacter = 0xFFFD;

enum class Utf8Status : uint8_t {
  Valid,       // a well-formed character of num_bytes bytes
  Invalid,     // an ill-formed maximal subpart of num_bytes bytes (>= 1)
  Incomplete,  // the text ends inside a character that is well-formed so far (num_bytes bytes)
};

struct Utf8Char {
  char32_t codepoint = 0;  // valid only when status == Valid
  uint8_t num_bytes = 0;
  Utf8Status status = Utf8Status::Valid;
};

// Decodes the character starting at text[offset]. Precondition: offset < text.size().
Utf8Char decode_utf8(std::string_view text, size_t offset);

// Appends the UTF-8 encoding of codepoint (U+FFFD for surrogates and values past U+10FFFF).
void append_utf8(std::string& out, char32_t codepoint);

// Returns the UTF-8 encoding of one codepoint.
std::string utf8_encode(char32_t codepoint);

// Returns text with every ill-formed maximal subpart (and a trailing incomplete character)
// replaced by U+FFFD; well-formed text comes back unchanged.
std::string sanitize_utf8(std::string_view text);

// Returns true when text is well-formed UTF-8.
bool is_valid_utf8(std::string_view text);

// Unicode general categories folded to their major class (the first letter of the category).
enum class UnicodeCategory : uint8_t {
  Other = 0,  // C*: controls, format, surrogates, private use, unassigned
  Letter = 1,
  Mark = 2,
  Number = 3,
  Punctuation = 4,
  Symbol = 5,
  Separator = 6,
};

// Returns the major general category of codepoint (Other past U+10FFFF).
UnicodeCategory unicode_category(char32_t codepoint);

// Returns true for \p{L}: general categories Lu, Ll, Lt, Lm, Lo.
inline bool is_unicode_letter(char32_t codepoint) {
  return unicode_category(codepoint) == UnicodeCategory::Letter;
}
// Returns true for \p{N}: general categories Nd, Nl, No.
inline bool is_unicode_number(char32_t codepoint) {
  return unicode_category(codepoint) == UnicodeCategory::Number;
}

// Returns true for the White_Space property (what \s matches in Unicode-aware regex engines).
bool is_unicode_whitespace(char32_t codepoint);

}  // namespace sluice
