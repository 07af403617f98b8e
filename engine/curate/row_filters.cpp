#include "engine/curate/row_filters.h"

#include "engine/core/error.h"

namespace sluice {

namespace {

std::vector<std::string> filter_patterns(const RowFilterOptions& options) {
  std::vector<std::string> patterns;
  if (options.default_refusals) patterns = default_refusal_patterns();
  for (size_t p = 0; p < options.refusal_patterns.size(); ++p) {
    const std::string folded = fold_for_matching(options.refusal_patterns[p]);
    if (folded.empty() || folded == " ")
      fail("row filter: refusal pattern ", p + 1, " (\"", options.refusal_patterns[p],
           "\") has no characters and would match every text");
  }
  patterns.insert(patterns.end(), options.refusal_patterns.begin(), options.refusal_patterns.end());
  return patterns;
}

void check_bounds(int min_value, int max_value, const char* min_name, const char* max_name) {
  if (min_value < 0) fail("row filter: ", min_name, " ", min_value, " is negative");
  if (max_value < 0) fail("row filter: ", max_name, " ", max_value, " is negative");
  if (max_value > 0 && min_value > max_value)
    fail("row filter: ", min_name, " ", min_value, " is above ", max_name, " ", max_value);
}

// "12 words, under min_words 20"; 0 bounds are off.
std::optional<std::string> length_reason(size_t count, const char* unit, int min_value,
                                         int max_value, const char* min_name,
                                         const char* max_name) {
  const std::string counted = str_cat(count, " ", unit, count == 1 ? "" : "s");
  if (min_value > 0 && count < static_cast<size_t>(min_value))
    return str_cat(counted, ", under ", min_name, " ", min_value);
  if (max_value > 0 && count > static_cast<size_t>(max_value))
    return str_cat(counted, ", over ", max_name, " ", max_value);
  return std::nullopt;
}

bool is_word_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

}  // namespace

const std::vector<std::string>& default_refusal_patterns() {
  static const std::vector<std::string> patterns = {
      "i'm sorry, but i can't",
      "i'm sorry, but i cannot",
      "i am sorry, but i cannot",
      "i apologize, but i can't",
      "i apologize, but i cannot",
      "as an ai language model",
      "as a language model",
      "as an ai developed by",
      "i cannot assist with",
      "i can't assist with",
      "i cannot help with that",
      "i can't help with that",
      "i'm unable to assist",
      "i am unable to assist",
      "i cannot fulfill",
      "i can't fulfill",
      "i cannot comply",
      "i can't comply",
      "i must decline",
      "it is not appropriate for me to",
  };
  return patterns;
}

size_t count_words(std::string_view text) {
  size_t words = 0;
  bool in_word = false;
  for (const char c : text) {
    const bool is_space = is_word_space(c);
    if (!is_space && !in_word) ++words;
    in_word = !is_space;
  }
  return words;
}

size_t count_chars(std::string_view text) {
  size_t chars = 0;
  for (const char c : text) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return chars;
}

RowFilter::RowFilter(const RowFilterOptions& options)
    : options_(options), patterns_(filter_patterns(options)), matcher_(patterns_) {
  check_bounds(options.min_words, options.max_words, "min_words", "max_words");
  check_bounds(options.min_chars, options.max_chars, "min_chars", "max_chars");
}

std::optional<std::string> RowFilter::reason(std::string_view text) const {
  if (options_.min_words > 0 || options_.max_words > 0) {
    if (auto why = length_reason(count_words(text), "word", options_.min_words, options_.max_words,
                                 "min_words", "max_words"))
      return why;
  }
  if (options_.min_chars > 0 || options_.max_chars > 0) {
    if (auto why = length_reason(count_chars(text), "char", options_.min_chars, options_.max_chars,
                                 "min_chars", "max_chars"))
      return why;
  }
  if (const auto pattern = matcher_.find_first(text))
    return str_cat("refusal: matches \"", patterns_[*pattern], "\"");
  return std::nullopt;
}

std::optional<std::string> filter_reason(std::string_view text, const RowFilterOptions& options) {
  return RowFilter(options).reason(text);
}

}  // namespace sluice
