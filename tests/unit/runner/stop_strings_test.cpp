#include "engine/runner/stop_strings.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "engine/core/error.h"

namespace sluice {
namespace {

constexpr size_t kNone = std::string_view::npos;

TEST(StopStringMatcher, FindsAStopStringInTheNewText) {
  const StopStringMatcher matcher({"END"});
  EXPECT_EQ(matcher.find("Hello END", 6), 6u);
  EXPECT_EQ(matcher.find("Hello END more", 0), 6u);
  EXPECT_EQ(matcher.find("Hello", 0), kNone);
}

TEST(StopStringMatcher, FindsAStopStringSpanningOldAndNewText) {
  const StopStringMatcher matcher({"##END"});
  // "Hello ##EN" was searched before; "D" is new.
  EXPECT_EQ(matcher.find("Hello ##END", 10), 6u);
  // Only the last byte of the stop string is old; four are new.
  EXPECT_EQ(matcher.find("Hello ##END", 7), 6u);
}

TEST(StopStringMatcher, IgnoresOccurrencesThatEndInTheOldText) {
  const StopStringMatcher matcher({"END"});
  // [0, 3) ends at the boundary: it was the previous call's to report.
  EXPECT_EQ(matcher.find("END and more", 3), kNone);
  EXPECT_EQ(matcher.find("END and more END", 3), 13u);
  EXPECT_EQ(matcher.find("END", 2), 0u);  // ends after offset 2
}

TEST(StopStringMatcher, ReportsTheEarliestOfSeveral) {
  const StopStringMatcher matcher({"world", "lo w", "o"});
  const auto match = matcher.find_match("hello world", 0);
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->offset, 3u);  // "lo w" at 3, before "o" at 4 and "world" at 6
  EXPECT_EQ(match->stop_idx, 1u);
  EXPECT_EQ(matcher.find("hello world", 0), 3u);
  // At equal offsets the stop string listed first wins.
  const StopStringMatcher overlapping({"abc", "ab"});
  const auto tie = overlapping.find_match("xxabc", 0);
  ASSERT_TRUE(tie.has_value());
  EXPECT_EQ(tie->offset, 2u);
  EXPECT_EQ(tie->stop_idx, 0u);
}

// Feeding text in pieces and truncating at the first report must stop exactly where a search of
// the whole text would: the earliest occurrence of any stop string.
TEST(StopStringMatcher, IncrementalSearchMatchesAWholeTextSearch) {
  const std::string full = "The answer is <|im_end|> and then </s> again <|im_end|>";
  const StopStringMatcher matcher({"</s>", "<|im_end|>", "answer is <"});
  const size_t expected = full.find("answer is <");  // earliest of the three, by hand: 4
  ASSERT_EQ(expected, 4u);
  for (size_t piece = 1; piece <= 7; ++piece) {
    std::string text;
    size_t found = kNone;
    for (size_t begin = 0; begin < full.size() && found == kNone; begin += piece) {
      const size_t new_text_offset = text.size();
      text += full.substr(begin, piece);
      found = matcher.find(text, new_text_offset);
    }
    EXPECT_EQ(found, expected) << "piece size " << piece;
  }
  const StopStringMatcher late({"</s>"});
  std::string text;
  size_t found = kNone;
  for (size_t begin = 0; begin < full.size() && found == kNone; ++begin) {
    const size_t new_text_offset = text.size();
    text += full[begin];
    found = late.find(text, new_text_offset);
  }
  EXPECT_EQ(found, 34u);
}

TEST(StopStringMatcher, HoldsBackTrailingPrefixesOfStopStrings) {
  const StopStringMatcher matcher({"</s>", "STOP"});
  EXPECT_EQ(matcher.num_held_back("abc</"), 2u);
  EXPECT_EQ(matcher.num_held_back("abc<"), 1u);
  EXPECT_EQ(matcher.num_held_back("abc</s"), 3u);
  EXPECT_EQ(matcher.num_held_back("abcST"), 2u);
  EXPECT_EQ(matcher.num_held_back("abc"), 0u);
  EXPECT_EQ(matcher.num_held_back("</"), 2u);  // the whole text
  EXPECT_EQ(matcher.num_held_back(""), 0u);
  // A complete stop string is not a proper prefix; find() reports it instead.
  EXPECT_EQ(matcher.num_held_back("ab</s>"), 0u);
  EXPECT_EQ(matcher.num_held_back("S</"), 2u);
  // The longest suffix wins, across stop strings and within one ("aab": "aa" beats "a").
  const StopStringMatcher repeated({"aab", "xa"});
  EXPECT_EQ(repeated.num_held_back("xaa"), 2u);
  EXPECT_EQ(repeated.num_held_back("zzx"), 1u);
}

TEST(StopStringMatcher, EmptyAndInvalid) {
  EXPECT_TRUE(StopStringMatcher({}).empty());
  EXPECT_EQ(StopStringMatcher({}).find("anything", 0), kNone);
  EXPECT_EQ(StopStringMatcher({}).num_held_back("anything"), 0u);
  EXPECT_FALSE(StopStringMatcher({"x"}).empty());
  EXPECT_THROW(StopStringMatcher({"ok", ""}), Error);
}

}  // namespace
}  // namespace sluice
