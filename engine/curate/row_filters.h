// Row filters before deduplication: a text too short or too long (words and characters), or one
// that reads as a refusal. Words are runs of non-whitespace (ASCII whitespace separates them);
// characters are UTF-8 code points (bytes that do not continue a sequence, so invalid bytes count
// one each). Refusal patterns are case-insensitive substrings (substring_matcher.h: apostrophes
// and quotes folded, whitespace runs as one space) — never regular expressions, so a hostile
// pattern cannot blow up — the default list's and the user's, searched together in one pass.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/curate/substring_matcher.h"

namespace sluice {

struct RowFilterOptions {
  int min_words = 0, max_words = 0;           // 0: no bound
  int min_chars = 0, max_chars = 0;           // 0: no bound
  std::vector<std::string> refusal_patterns;  // the user's, added to the defaults
  bool default_refusals = true;               // default_refusal_patterns() as well
};

// The phrases that mark a typical refusal or a model talking about itself ("I'm sorry, but I
// can't", "as an AI language model", "I cannot assist with", ...), lower case.
const std::vector<std::string>& default_refusal_patterns();

// The filters compiled once, for many rows (thread-safe: reason() is const).
class RowFilter {
 public:
  // Throws Error for a negative bound, a minimum above its maximum, or a pattern the matcher
  // refuses (substring_matcher.h).
  explicit RowFilter(const RowFilterOptions& options);

  // Returns why text is filtered out — "12 words, under min_words 20", "812 chars, over
  // max_chars 500", "refusal: matches \"as an AI language model\"" (the pattern as given) — or
  // nullopt when it passes. Lengths are checked first.
  std::optional<std::string> reason(std::string_view text) const;

 private:
  RowFilterOptions options_;
  std::vector<std::string> patterns_;  // the defaults (when on), then the user's
  SubstringMatcher matcher_;
};

// One text through a RowFilter built for it: for a few rows; build a RowFilter for many.
std::optional<std::string> filter_reason(std::string_view text, const RowFilterOptions& options);

// Returns the number of words and of UTF-8 characters of text, as the filters count them.
size_t count_words(std::string_view text);
size_t count_chars(std::string_view text);

}  // namespace sluice
