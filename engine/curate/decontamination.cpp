#include "engine/curate/decontamination.h"

#include <algorithm>

#include "engine/core/error.h"
#include "engine/curate/text_normalize.h"

namespace sluice {

namespace {

std::vector<uint64_t> hashes_of_words(const std::vector<std::string_view>& words) {
  std::vector<uint64_t> hashes(words.size());
  for (size_t i = 0; i < words.size(); ++i) hashes[i] = hash_bytes(words[i]);
  return hashes;
}

std::string_view word_in(const std::string& normalized, const std::vector<uint32_t>& starts,
                         size_t k) {
  const size_t start = starts[k];
  const size_t end = k + 1 < starts.size() ? starts[k + 1] - 1 : normalized.size();
  return std::string_view(normalized).substr(start, end - start);
}

}  // namespace

DecontaminationIndex::DecontaminationIndex(const std::vector<std::string>& eval_texts,
                                           DecontaminationOptions options)
    : options_(options) {
  if (options.ngram_words < 1) fail("decontamination: ngram_words ", options.ngram_words, " < 1");
  if (options.min_eval_words < 1 || options.min_eval_words > options.ngram_words)
    fail("decontamination: min_eval_words ", options.min_eval_words, " is not in [1, ",
         options.ngram_words, "]");
  const auto n = static_cast<size_t>(options.ngram_words);
  const auto min_words = static_cast<size_t>(options.min_eval_words);
  eval_normalized_.reserve(eval_texts.size());
  eval_words_.reserve(eval_texts.size());
  for (size_t e = 0; e < eval_texts.size(); ++e) {
    eval_normalized_.push_back(normalize_for_dedup(eval_texts[e]));
    const std::string& normalized = eval_normalized_.back();
    const std::vector<std::string_view> words = split_normalized_words(normalized);
    std::vector<uint32_t> starts(words.size());
    for (size_t k = 0; k < words.size(); ++k)
      starts[k] = static_cast<uint32_t>(words[k].data() - normalized.data());
    eval_words_.push_back(std::move(starts));
    const std::vector<uint64_t> hashes = hashes_of_words(words);
    const auto eval_index = static_cast<uint32_t>(e);
    if (words.size() >= n) {
      for (size_t start = 0; start + n <= words.size(); ++start) {
        ngrams_.try_emplace(
            hash_word_sequence(hashes.data() + start, n),
            NgramEntry{eval_index, static_cast<uint32_t>(start), static_cast<uint32_t>(n)});
      }
    } else if (words.size() >= min_words) {
      const auto length = static_cast<uint32_t>(words.size());
      ngrams_.try_emplace(hash_word_sequence(hashes.data(), words.size()),
                          NgramEntry{eval_index, 0, length});
      if (std::find(short_lengths_.begin(), short_lengths_.end(), length) == short_lengths_.end())
        short_lengths_.push_back(length);
    } else {
      ++num_skipped_eval_texts_;
    }
  }
  std::sort(short_lengths_.begin(), short_lengths_.end());
}

bool DecontaminationIndex::entry_matches(const NgramEntry& entry,
                                         const std::vector<std::string_view>& words,
                                         size_t start) const {
  const std::string& normalized = eval_normalized_[entry.eval_index];
  const std::vector<uint32_t>& starts = eval_words_[entry.eval_index];
  for (size_t k = 0; k < entry.num_words; ++k) {
    if (word_in(normalized, starts, entry.first_word + k) != words[start + k]) return false;
  }
  return true;
}

std::optional<ContaminationMatch> DecontaminationIndex::find(std::string_view text) const {
  if (ngrams_.empty()) return std::nullopt;
  const std::string normalized = normalize_for_dedup(text);
  const std::vector<std::string_view> words = split_normalized_words(normalized);
  const std::vector<uint64_t> hashes = hashes_of_words(words);
  const auto n = static_cast<size_t>(options_.ngram_words);
  const auto lookup = [&](size_t start, size_t length) -> std::optional<ContaminationMatch> {
    const auto it = ngrams_.find(hash_word_sequence(hashes.data() + start, length));
    if (it == ngrams_.end() || it->second.num_words != length ||
        !entry_matches(it->second, words, start))
      return std::nullopt;
    std::string ngram;
    for (size_t k = 0; k < length; ++k) {
      if (k > 0) ngram.push_back(' ');
      ngram += words[start + k];
    }
    return ContaminationMatch{std::move(ngram), it->second.eval_index};
  };
  for (size_t start = 0; start < words.size(); ++start) {
    if (start + n <= words.size()) {
      if (auto match = lookup(start, n)) return match;
    }
    for (const uint32_t length : short_lengths_) {
      if (start + length > words.size()) break;
      if (auto match = lookup(start, length)) return match;
    }
  }
  return std::nullopt;
}

}  // namespace sluice
