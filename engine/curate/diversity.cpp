#include "engine/curate/diversity.h"

#include <unordered_set>

#include "engine/core/error.h"
#include "engine/curate/text_normalize.h"

namespace sluice {

double distinct_n(const std::vector<std::string>& texts, int n) {
  if (n < 1) fail("distinct_n: n ", n, " must be at least 1");
  const auto width = static_cast<size_t>(n);
  std::unordered_set<uint64_t> distinct;
  size_t total = 0;
  std::vector<uint64_t> hashes;
  for (const std::string& text : texts) {
    const std::string normalized = normalize_for_dedup(text);
    const std::vector<std::string_view> words = split_normalized_words(normalized);
    if (words.size() < width) continue;
    hashes.resize(words.size());
    for (size_t i = 0; i < words.size(); ++i) hashes[i] = hash_bytes(words[i]);
    for (size_t start = 0; start + width <= words.size(); ++start) {
      distinct.insert(hash_word_sequence(hashes.data() + start, width));
      ++total;
    }
  }
  return total == 0 ? 0.0 : static_cast<double>(distinct.size()) / static_cast<double>(total);
}

}  // namespace sluice
