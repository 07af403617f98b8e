#include "engine/curate/synthetic_rows.h"

#include <algorithm>
#include <cctype>

#include "engine/core/error.h"
#include "engine/curate/text_normalize.h"

namespace sluice {

namespace {

// splitmix64: a small generator whose sequence is the same everywhere (unlike std's
// distributions).
class SyntheticRandom {
 public:
  explicit SyntheticRandom(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    return mix64(state_);
  }
  size_t below(size_t bound) { return static_cast<size_t>(next() % bound); }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

// Word k spelled as the base-16 digits of k + 16 in two-letter syllables: every word has two
// syllables or more, and distinct k give distinct words.
std::string pseudo_word(size_t k) {
  static constexpr const char* kSyllables[16] = {"ba", "ke", "li", "mo", "nu", "ra", "se", "ti",
                                                 "vo", "za", "do", "fe", "gu", "ho", "pi", "wy"};
  std::string reversed;
  for (size_t value = k + 16; value > 0; value /= 16) {
    const char* syllable = kSyllables[value % 16];
    reversed.push_back(syllable[1]);
    reversed.push_back(syllable[0]);
  }
  return {reversed.rbegin(), reversed.rend()};
}

// An exact copy that only normalisation makes equal: capitalised, spaced and punctuated.
std::string reformatted(const std::string& text) {
  std::string copy = "  " + text + "!";
  copy[2] = static_cast<char>(std::toupper(static_cast<unsigned char>(copy[2])));
  const size_t space = copy.find(' ', 3);
  if (space != std::string::npos) copy.replace(space, 1, ",\t ");
  return copy;
}

}  // namespace

SyntheticRows make_synthetic_rows(const SyntheticRowsSpec& spec) {
  if (spec.words_per_row < 1 || spec.vocabulary_size < 2 || spec.max_changed_words < 1)
    fail("synthetic rows: words_per_row ", spec.words_per_row, ", vocabulary_size ",
         spec.vocabulary_size, " and max_changed_words ", spec.max_changed_words,
         " must be >= 1, 2 and 1");
  const size_t num_planted = spec.num_exact + spec.num_near;
  if (2 * num_planted > spec.num_rows)
    fail("synthetic rows: ", num_planted, " planted copies need ", 2 * num_planted,
         " rows, more than ", spec.num_rows);
  SyntheticRandom random(spec.seed);
  const auto vocabulary_size = static_cast<size_t>(spec.vocabulary_size);
  std::vector<std::string> vocabulary(vocabulary_size);
  std::vector<double> cumulative(vocabulary_size);
  double total = 0;
  for (size_t k = 0; k < vocabulary_size; ++k) {
    vocabulary[k] = pseudo_word(k);
    total += 1.0 / static_cast<double>(k + 1);
    cumulative[k] = total;
  }
  const auto draw_word = [&]() -> size_t {
    const double u = random.unit() * total;
    const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
    return std::min(static_cast<size_t>(it - cumulative.begin()), vocabulary_size - 1);
  };

  SyntheticRows rows;
  rows.texts.resize(spec.num_rows);
  rows.exact_source.assign(spec.num_rows, -1);
  rows.near_source.assign(spec.num_rows, -1);
  const auto num_words = static_cast<size_t>(spec.words_per_row);
  // [num_rows, words_per_row] vocabulary indices
  std::vector<uint32_t> words(spec.num_rows * num_words);
  for (uint32_t& word : words) word = static_cast<uint32_t>(draw_word());
  const auto row_words = [&words, num_words](size_t row) { return words.data() + row * num_words; };

  // A shuffled order of the rows: the first num_planted become copies, the next num_planted
  // their sources, so copies land before and after their sources alike.
  std::vector<size_t> order(spec.num_rows);
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[random.below(i)]);
  std::vector<uint8_t> is_reformatted(spec.num_rows, 0);
  for (size_t p = 0; p < num_planted; ++p) {
    const size_t copy = order[p], source = order[num_planted + p];
    std::copy_n(row_words(source), num_words, row_words(copy));
    if (p < spec.num_exact) {
      rows.exact_source[copy] = static_cast<int64_t>(source);
      is_reformatted[copy] = p % 2;
      continue;
    }
    rows.near_source[copy] = static_cast<int64_t>(source);
    const size_t num_changes = 1 + random.below(static_cast<size_t>(spec.max_changed_words));
    for (size_t c = 0; c < num_changes; ++c) {
      uint32_t& word = row_words(copy)[random.below(num_words)];
      auto replacement = static_cast<uint32_t>(draw_word());
      while (replacement == word) replacement = static_cast<uint32_t>(draw_word());
      word = replacement;
    }
  }
  for (size_t i = 0; i < spec.num_rows; ++i) {
    std::string& text = rows.texts[i];
    for (size_t w = 0; w < num_words; ++w) {
      if (w > 0) text.push_back(' ');
      text += vocabulary[row_words(i)[w]];
    }
    if (is_reformatted[i]) text = reformatted(text);
  }
  return rows;
}

PlantedScore score_planted(const SyntheticRows& rows, const DedupResult& result) {
  PlantedScore score;
  const auto& verdicts = result.verdicts;
  const auto same_cluster = [&verdicts](size_t a, int64_t b) {
    const int64_t cluster = verdicts[a].cluster;
    return cluster >= 0 && cluster == verdicts[static_cast<size_t>(b)].cluster;
  };
  // A removal is right when the kept row is the other half of the removed row's planted pair.
  const auto is_pair = [](const std::vector<int64_t>& source, size_t removed, int64_t kept) {
    return source[removed] == kept ||
           source[static_cast<size_t>(kept)] == static_cast<int64_t>(removed);
  };
  size_t num_near_planted = 0;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (rows.exact_source[i] >= 0 && same_cluster(i, rows.exact_source[i])) ++score.num_exact_found;
    if (rows.near_source[i] >= 0) {
      ++num_near_planted;
      if (same_cluster(i, rows.near_source[i])) ++score.num_near_found;
    }
    const DedupVerdict& verdict = verdicts[i];
    if (!verdict.removed) continue;
    if (verdict.reason.starts_with("exact")) {
      ++score.num_removed_exact;
      if (is_pair(rows.exact_source, i, verdict.duplicate_of)) ++score.num_correct_exact;
    } else {
      ++score.num_removed_near;
      if (is_pair(rows.near_source, i, verdict.duplicate_of)) ++score.num_correct_near;
    }
  }
  score.near_recall = num_near_planted == 0 ? 1.0
                                            : static_cast<double>(score.num_near_found) /
                                                  static_cast<double>(num_near_planted);
  score.near_precision = score.num_removed_near == 0
                             ? 1.0
                             : static_cast<double>(score.num_correct_near) /
                                   static_cast<double>(score.num_removed_near);
  return score;
}

}  // namespace sluice
