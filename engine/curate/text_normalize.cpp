#include "engine/curate/text_normalize.h"

#include <algorithm>

#include "engine/curate/utf8_sequence.h"

namespace sluice {

namespace {

enum class CharClass : uint8_t { Keep, Space, Drop };

// What normalisation does with a character: ASCII letters and digits are kept (letters
// lower-cased), ASCII whitespace and control bytes separate words, ASCII punctuation vanishes.
// Beyond ASCII: no-break space, the ideographic space and the spaces of the General Punctuation
// block (U+2000-200A, 2028, 2029, 202F, 205F) separate words; the rest of that block — dashes,
// typographic quotes and apostrophes, ellipsis, zero-width characters — vanishes, so "it’s" is
// "it's" is "its". Every other character is kept as it is.
CharClass char_class(uint32_t code_point) {
  if (code_point < 0x80) {
    const auto c = static_cast<unsigned char>(code_point);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
      return CharClass::Keep;
    if (c <= 0x20 || c == 0x7F) return CharClass::Space;
    return CharClass::Drop;
  }
  if (code_point == 0xA0 || code_point == 0x3000) return CharClass::Space;
  if (code_point < 0x2000 || code_point > 0x206F) return CharClass::Keep;
  const bool is_space = code_point <= 0x200A || code_point == 0x2028 || code_point == 0x2029 ||
                        code_point == 0x202F || code_point == 0x205F;
  return is_space ? CharClass::Space : CharClass::Drop;
}

}  // namespace

std::string normalize_for_dedup(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool is_space_pending = false;
  // Whether the last byte written is an invalid one, kept as it is.
  bool after_invalid_byte = false;
  for (size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const Utf8Sequence sequence = byte < 0x80 ? Utf8Sequence{1, byte} : utf8_sequence_at(text, i);
    const size_t length = std::max<size_t>(sequence.length, 1);
    CharClass kind = sequence.length == 0 ? CharClass::Keep : char_class(sequence.code_point);
    // Punctuation after an invalid byte separates instead of vanishing, so that the bytes on its
    // two sides never join into a character that normalising again would treat otherwise.
    if (kind == CharClass::Drop && after_invalid_byte) kind = CharClass::Space;
    if (kind == CharClass::Space) {
      is_space_pending = !out.empty();
      after_invalid_byte = false;
    } else if (kind == CharClass::Keep) {
      if (is_space_pending) out.push_back(' ');
      is_space_pending = false;
      const char first = text[i];
      out.push_back(first >= 'A' && first <= 'Z' ? static_cast<char>(first - 'A' + 'a') : first);
      out.append(text.substr(i + 1, length - 1));
      after_invalid_byte = sequence.length == 0;
    }
    i += length;
  }
  return out;
}

std::vector<std::string_view> split_normalized_words(std::string_view normalized) {
  std::vector<std::string_view> words;
  size_t start = 0;
  while (start < normalized.size()) {
    size_t end = normalized.find(' ', start);
    if (end == std::string_view::npos) end = normalized.size();
    if (end > start) words.push_back(normalized.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

std::vector<std::string> words_of(std::string_view text) {
  const std::string normalized = normalize_for_dedup(text);
  std::vector<std::string> words;
  for (const std::string_view word : split_normalized_words(normalized)) words.emplace_back(word);
  return words;
}

uint64_t hash_bytes(std::string_view bytes) {
  uint64_t h = 0xCBF29CE484222325ULL;  // FNV-1a's offset basis and prime
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ULL;
  }
  return mix64(h ^ bytes.size());
}

uint64_t hash_word_sequence(const uint64_t* word_hashes, size_t num_words) {
  uint64_t h = 0x9E3779B97F4A7C15ULL;
  for (size_t i = 0; i < num_words; ++i) h = mix64(h * 0x9E3779B97F4A7C15ULL + word_hashes[i]);
  return h;
}

}  // namespace sluice
