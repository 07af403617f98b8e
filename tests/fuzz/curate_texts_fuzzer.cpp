// Feeds generated-looking texts to the curation library (engine/curate): the input is cut at
// NUL bytes into texts; the first byte picks the thresholds. Nothing may crash on any bytes
// (invalid UTF-8 included), and the promises hold: normalisation is idempotent and leaves no
// ASCII upper case, punctuation or doubled space; deduplication gives the same verdicts at 1 and
// 3 threads and every removed text names a lower, kept one; the substring matcher reports a
// pattern that really occurs in the folded text, and finds one whenever a plain search does;
// every indexed evaluation text is contaminated by itself; escaped HTML holds no markup.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/error.h"
#include "engine/curate/decontamination.h"
#include "engine/curate/dedup.h"
#include "engine/curate/diversity.h"
#include "engine/curate/html_escape.h"
#include "engine/curate/row_filters.h"
#include "engine/curate/substring_matcher.h"
#include "engine/curate/text_normalize.h"
#include "tests/fuzz/fuzz_check.h"

using namespace sluice;

namespace {

void check_normalized(std::string_view text) {
  const std::string normalized = normalize_for_dedup(text);
  fuzz::fuzz_require(normalize_for_dedup(normalized) == normalized,
                     "normalising a normalised text changed it");
  for (size_t i = 0; i < normalized.size(); ++i) {
    const auto c = static_cast<unsigned char>(normalized[i]);
    const bool is_bad =
        (c < 0x80 && c != ' ' && !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9')) ||
        (c == ' ' && (i == 0 || i + 1 == normalized.size() || normalized[i + 1] == ' '));
    fuzz::fuzz_require(!is_bad, str_cat("normalised text has byte ", int{c}, " at ", i));
  }
}

void check_dedup(const std::vector<std::string>& texts, double threshold, int shingle_words) {
  DedupOptions options;
  options.threshold = threshold;
  options.shingle_words = shingle_words;
  options.num_permutations = 32;
  options.num_threads = 1;
  const DedupResult one = find_duplicates(texts, options);
  options.num_threads = 3;
  const DedupResult three = find_duplicates(texts, options);
  for (size_t i = 0; i < texts.size(); ++i) {
    const DedupVerdict& v = one.verdicts[i];
    const DedupVerdict& w = three.verdicts[i];
    fuzz::fuzz_require(v.removed == w.removed && v.reason == w.reason && v.cluster == w.cluster &&
                           v.duplicate_of == w.duplicate_of,
                       str_cat("text ", i, ": verdicts differ at 1 and 3 threads"));
    if (!v.removed) continue;
    fuzz::fuzz_require(
        v.duplicate_of >= 0 && static_cast<size_t>(v.duplicate_of) < i &&
            !one.verdicts[static_cast<size_t>(v.duplicate_of)].removed,
        str_cat("text ", i, " is removed for ", v.duplicate_of, ", not a lower kept text"));
  }
}

void check_matcher(const std::vector<std::string>& patterns, std::string_view text) {
  std::vector<std::string> usable;
  for (const std::string& p : patterns) {
    const std::string folded = fold_for_matching(p);
    if (!folded.empty() && folded != " " && usable.size() < 8) usable.push_back(p);
  }
  const SubstringMatcher matcher(usable);
  const std::string folded_text = fold_for_matching(text);
  const auto found = matcher.find_first(text);
  bool any = false;
  for (const std::string& p : usable)
    any = any || folded_text.find(fold_for_matching(p)) != std::string::npos;
  fuzz::fuzz_require(found.has_value() == any, "the matcher and a plain search disagree");
  if (found) {
    fuzz::fuzz_require(folded_text.find(fold_for_matching(usable[*found])) != std::string::npos,
                       str_cat("pattern ", *found, " reported but absent"));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const double threshold = 0.3 + 0.7 * (data[0] % 8) / 7.0;
  const int shingle_words = 1 + data[0] / 64;
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::string> texts;
  for (size_t start = 0; start <= input.size();) {
    size_t end = input.find('\0', start);
    if (end == std::string_view::npos) end = input.size();
    texts.emplace_back(input.substr(start, end - start));
    start = end + 1;
  }
  for (const std::string& text : texts) {
    check_normalized(text);
    const std::string escaped = html_escape(text);
    fuzz::fuzz_require(escaped.find_first_of("<>\"'") == std::string::npos,
                       "escaped text holds markup");
    (void)truncate_utf8(text, 7);
  }
  check_dedup(texts, threshold, shingle_words);
  (void)distinct_n(texts, 1 + data[0] % 3);
  check_matcher(texts, input);
  DecontaminationOptions decontamination;
  decontamination.ngram_words = 1 + data[0] % 13;
  decontamination.min_eval_words = 1 + (data[0] % 13) / 2;
  const DecontaminationIndex index(texts, decontamination);
  for (size_t e = 0; e < texts.size(); ++e) {
    if (words_of(texts[e]).size() < static_cast<size_t>(decontamination.min_eval_words)) continue;
    fuzz::fuzz_require(index.find(texts[e]).has_value(),
                       str_cat("evaluation text ", e, " is not found in itself"));
  }
  RowFilterOptions filter;
  filter.min_words = data[0] % 5;
  try {
    filter.refusal_patterns = texts;
    (void)RowFilter(filter).reason(input);
  } catch (const Error&) {
    // An empty or whitespace-only pattern is refused by name: fine.
  }
  return 0;
}
