// Row filters (engine/curate/row_filters.h) and the substring matcher under them: length bounds
// in words and characters with the reason naming the count and the bound, refusals matched
// case-insensitively with typographic apostrophes, user patterns, the first pattern to end, and
// patterns that could blow up a regular expression.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/curate/row_filters.h"
#include "engine/curate/substring_matcher.h"

namespace sluice {
namespace {

TEST(RowFilters, LengthReasonsNameTheCountAndTheBound) {
  RowFilterOptions options;
  options.min_words = 20;
  EXPECT_EQ(
      filter_reason("one two three four five six seven eight nine ten eleven twelve", options),
      "12 words, under min_words 20");
  EXPECT_EQ(filter_reason("", options), "0 words, under min_words 20");
  options = {};
  options.max_words = 3;
  EXPECT_EQ(filter_reason("a  b\tc\nd", options), "4 words, over max_words 3");
  EXPECT_EQ(filter_reason("a b c", options), std::nullopt);
  options = {};
  options.min_chars = 5;
  // "héé": 3 characters in 5 bytes.
  EXPECT_EQ(filter_reason("h\xC3\xA9\xC3\xA9", options), "3 chars, under min_chars 5");
  options = {};
  options.max_chars = 1;
  EXPECT_EQ(filter_reason("ab", options), "2 chars, over max_chars 1");
  EXPECT_EQ(filter_reason("a", options), std::nullopt);
}

TEST(RowFilters, DefaultRefusalsMatchWhateverTheCaseAndApostrophe) {
  const RowFilter filter(RowFilterOptions{});
  EXPECT_EQ(filter.reason("Sure! Here is the answer."), std::nullopt);
  EXPECT_EQ(filter.reason("As an AI Language Model, I have no opinions."),
            "refusal: matches \"as an ai language model\"");
  // U+2019 for the apostrophe and a line break inside the phrase.
  EXPECT_EQ(filter.reason("I\xE2\x80\x99m sorry, but I\ncan\xE2\x80\x99t do that."),
            "refusal: matches \"i'm sorry, but i can't\"");
  EXPECT_EQ(filter.reason("Unfortunately I cannot assist with this request."),
            "refusal: matches \"i cannot assist with\"");
  RowFilterOptions without_defaults;
  without_defaults.default_refusals = false;
  EXPECT_EQ(filter_reason("As an AI language model, no.", without_defaults), std::nullopt);
}

TEST(RowFilters, UserPatternsAreCaseInsensitiveSubstringsNotRegexes) {
  RowFilterOptions options;
  options.default_refusals = false;
  options.refusal_patterns = {"(a+)+$", "Lorem IPSUM"};
  EXPECT_EQ(filter_reason("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", options),
            std::nullopt);
  EXPECT_EQ(filter_reason("x (a+)+$ y", options), "refusal: matches \"(a+)+$\"");
  EXPECT_EQ(filter_reason("... lorem ipsum dolor", options), "refusal: matches \"Lorem IPSUM\"");
  // Lengths are checked before refusals.
  options.min_words = 10;
  EXPECT_EQ(filter_reason("lorem ipsum", options), "2 words, under min_words 10");
}

TEST(RowFilters, RefusesBadOptions) {
  RowFilterOptions options;
  options.min_words = 10;
  options.max_words = 5;
  EXPECT_THROW(RowFilter{options}, Error);
  options = {};
  options.max_chars = -1;
  EXPECT_THROW(RowFilter{options}, Error);
  options = {};
  options.refusal_patterns = {"ok", "  \t "};
  EXPECT_THROW(RowFilter{options}, Error);
  options.refusal_patterns = {std::string(SubstringMatcher::kMaxPatternBytes + 1, 'x')};
  EXPECT_THROW(RowFilter{options}, Error);
}

TEST(SubstringMatcher, ReportsThePatternThatEndsFirstAndFollowsFailureLinks) {
  const SubstringMatcher matcher({"she", "he", "hers", "his", "abcd", "bc"});
  EXPECT_EQ(matcher.find_first("ushers"), 0u);  // "she" and "he" end at the same byte: the lower
  EXPECT_EQ(matcher.find_first("xhex"), 1u);
  EXPECT_EQ(matcher.find_first("ahishers"), 3u);
  EXPECT_EQ(matcher.find_first("abce"), 5u);  // "abcd" fails at 'e'; "bc" was found inside it
  EXPECT_EQ(matcher.find_first("xyz"), std::nullopt);
  EXPECT_EQ(SubstringMatcher({}).find_first("anything"), std::nullopt);
  EXPECT_EQ(fold_for_matching("A \xE2\x80\x9CQuote\xE2\x80\x9D\t\n it\xE2\x80\x98s"),
            "a \"quote\" it's");
}

}  // namespace
}  // namespace sluice
