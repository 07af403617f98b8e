#include "engine/curate/shingles.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "engine/curate/text_normalize.h"

namespace sluice {

std::vector<uint64_t> shingle_hashes(std::span<const std::string_view> words, int shingle_words) {
  assert(shingle_words >= 1 && "a shingle holds at least one word");
  std::vector<uint64_t> word_hashes(words.size());
  for (size_t i = 0; i < words.size(); ++i) word_hashes[i] = hash_bytes(words[i]);
  const auto width = static_cast<size_t>(shingle_words);
  std::vector<uint64_t> shingles;
  if (words.empty()) return shingles;
  if (words.size() <= width) {
    shingles.push_back(hash_word_sequence(word_hashes.data(), words.size()));
    return shingles;
  }
  shingles.reserve(words.size() - width + 1);
  for (size_t start = 0; start + width <= words.size(); ++start)
    shingles.push_back(hash_word_sequence(word_hashes.data() + start, width));
  std::sort(shingles.begin(), shingles.end());
  shingles.erase(std::unique(shingles.begin(), shingles.end()), shingles.end());
  return shingles;
}

std::vector<uint64_t> shingle_hashes_of_text(std::string_view text, int shingle_words) {
  const std::string normalized = normalize_for_dedup(text);
  const std::vector<std::string_view> words = split_normalized_words(normalized);
  return shingle_hashes(words, shingle_words);
}

double jaccard_of_sorted(std::span<const uint64_t> a, std::span<const uint64_t> b) {
  size_t i = 0, j = 0, common = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++common;
      ++i;
      ++j;
    }
  }
  const size_t num_union = a.size() + b.size() - common;
  return num_union == 0 ? 0.0 : static_cast<double>(common) / static_cast<double>(num_union);
}

}  // namespace sluice
