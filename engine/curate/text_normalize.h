// Text as deduplication, decontamination and diversity see it: ASCII letters lower-cased,
// punctuation removed, whitespace runs collapsed to one space, the ends trimmed. Punctuation is
// ASCII's and the General Punctuation block's (dashes, typographic quotes and apostrophes,
// ellipsis, zero-width characters); whitespace is ASCII's, the no-break and ideographic spaces
// and the block's spaces. Every other character is copied as it is (no Unicode case folding),
// and so is every byte that is not valid UTF-8: a multi-byte sequence is never split or altered
// and invalid input cannot fail. "Hello, World!" and "hello world" are the same text;
// "Ünïcode" keeps its non-ASCII letters as written. Punctuation is removed rather than replaced
// by a space ("don't" and "don’t" are "dont", as datatrove's normalisation has it) — except
// right after an invalid byte, where it separates words, so that normalising is idempotent.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// Returns text normalised as above.
std::string normalize_for_dedup(std::string_view text);

// Returns the words of text once normalised, in order (empty for a text that normalises to "").
std::vector<std::string> words_of(std::string_view text);

// Splits an already normalised text at its single spaces into views of it (no copies): the fast
// form of words_of for callers that keep the normalised string alive.
std::vector<std::string_view> split_normalized_words(std::string_view normalized);

// A 64-bit hash of bytes (FNV-1a followed by a finalising mix, so that nearby inputs spread over
// every bit): stable across platforms and runs, the hash that exact deduplication and the word
// n-grams use.
uint64_t hash_bytes(std::string_view bytes);

// Mixes a 64-bit value so that every input bit affects every output bit (splitmix64's finaliser).
inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return x;
}

// The hash of a sequence of word hashes, order-sensitive: the hash of a shingle or n-gram.
uint64_t hash_word_sequence(const uint64_t* word_hashes, size_t num_words);

}  // namespace sluice
