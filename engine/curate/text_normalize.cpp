#include "engine/curate/text_normalize.h"

namespace sluice {

namespace {

enum class AsciiClass : uint8_t { Keep, Space, Drop };

// What normalisation does with an ASCII byte: letters and digits are kept (letters lower-cased),
// whitespace and control bytes separate words, punctuation disappears.
AsciiClass ascii_class(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
    return AsciiClass::Keep;
  if (c <= 0x20 || c == 0x7F) return AsciiClass::Space;
  return AsciiClass::Drop;
}

}  // namespace

std::string normalize_for_dedup(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool is_space_pending = false;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x80) {
      const AsciiClass kind = ascii_class(c);
      if (kind == AsciiClass::Space) {
        is_space_pending = !out.empty();
        continue;
      }
      if (kind == AsciiClass::Drop) continue;
    }
    if (is_space_pending) out.push_back(' ');
    is_space_pending = false;
    // Bytes of 0x80 and up (a UTF-8 sequence's, or invalid ones) go through untouched.
    out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : ch);
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
