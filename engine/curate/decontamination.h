// Decontamination: does a generated text contain a passage of a user's evaluation set? As the
// GPT-3 and Llama reports did it, a passage is a run of ngram_words (13) consecutive words of the
// normalised texts (text_normalize.h); a generated text that shares any such run with an
// evaluation text is contaminated.
//
// Short evaluation texts (fewer words than ngram_words): GPT-3 lowered N per benchmark to its
// short examples' length but never below 8, so that common phrases do not collide. Here an
// evaluation text of k words, min_eval_words <= k < ngram_words, is indexed whole, as one k-gram:
// a generated text contains it when its k words appear in it consecutively. Evaluation texts
// shorter than min_eval_words are not indexed (counted in num_skipped_eval_texts()). A generated
// text is never matched as a whole against the inside of an evaluation text: a short generated
// text matches only the short evaluation texts it contains.
//
// Matches are found by a 64-bit hash of the words and confirmed word by word, so a reported
// match is always a real one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sluice {

struct DecontaminationOptions {
  int ngram_words = 13;
  int min_eval_words = 8;  // shorter evaluation texts are not indexed; at most ngram_words
};

struct ContaminationMatch {
  std::string ngram;      // the shared words, normalised, one space apart
  size_t eval_index = 0;  // the first evaluation text that holds them
};

class DecontaminationIndex {
 public:
  // Indexes eval_texts. Throws Error when ngram_words < 1 or min_eval_words is not in
  // [1, ngram_words].
  explicit DecontaminationIndex(const std::vector<std::string>& eval_texts,
                                DecontaminationOptions options = {});

  // Returns the first (by position in text) run of words text shares with an evaluation text, or
  // nullopt. Thread-safe: const and free of caches.
  std::optional<ContaminationMatch> find(std::string_view text) const;

  size_t num_eval_texts() const { return eval_words_.size(); }
  size_t num_ngrams() const { return ngrams_.size(); }  // distinct, indexed
  size_t num_skipped_eval_texts() const { return num_skipped_eval_texts_; }

 private:
  struct NgramEntry {
    uint32_t eval_index;
    uint32_t first_word;
    uint32_t num_words;
  };
  bool entry_matches(const NgramEntry& entry, const std::vector<std::string_view>& words,
                     size_t start) const;

  DecontaminationOptions options_;
  std::vector<std::string> eval_normalized_;
  std::vector<std::vector<uint32_t>> eval_words_;  // each word's start offset in its text
  std::unordered_map<uint64_t, NgramEntry> ngrams_;
  std::vector<uint32_t> short_lengths_;  // the word counts of indexed short texts, ascending
  size_t num_skipped_eval_texts_ = 0;
};

}  // namespace sluice
