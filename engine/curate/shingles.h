// Word shingles: the overlapping runs of shingle_words consecutive words of a normalised text
// (text_normalize.h), each hashed to 64 bits, as a sorted set. Near-duplicate detection compares
// texts by the Jaccard similarity of these sets, |A ∩ B| / |A ∪ B|: one changed word in a
// 200-word text changes at most shingle_words of its ~196 shingles. A text with fewer words than
// a shingle is one shingle of all its words; a text without words has no shingles.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace sluice {

// Returns the sorted, duplicate-free hashes of the shingles of words (already normalised).
// Precondition: shingle_words >= 1.
std::vector<uint64_t> shingle_hashes(std::span<const std::string_view> words, int shingle_words);

// The same, of a raw text (normalised first).
std::vector<uint64_t> shingle_hashes_of_text(std::string_view text, int shingle_words);

// Returns |a ∩ b| / |a ∪ b| of two sorted duplicate-free sets; 0 when both are empty.
double jaccard_of_sorted(std::span<const uint64_t> a, std::span<const uint64_t> b);

}  // namespace sluice
