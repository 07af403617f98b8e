#include "engine/core/json_depth.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice {
namespace {

std::string nested(int depth, const std::string& inner = "1") {
  return std::string(static_cast<size_t>(depth), '[') + inner +
         std::string(static_cast<size_t>(depth), ']');
}

TEST(JsonDepth, AcceptsUpToTheLimitAndPointsAtTheFirstBracketPastIt) {
  EXPECT_EQ(find_json_nesting_past(nested(3), 3), std::nullopt);
  EXPECT_EQ(find_json_nesting_past(nested(4), 3), std::optional<size_t>(3));
  EXPECT_EQ(find_json_nesting_past(R"({"a":[{"b":{}}]})", 4), std::nullopt);
  EXPECT_EQ(find_json_nesting_past(R"({"a":[{"b":{}}]})", 3), std::optional<size_t>(11));
  // Siblings do not add up: depth is nesting, not a count of brackets.
  EXPECT_EQ(find_json_nesting_past("[[1],[2],[3],{\"x\":[]}]", 3), std::nullopt);
}

TEST(JsonDepth, BracketsInsideStringsAndEscapesDoNotCount) {
  EXPECT_EQ(find_json_nesting_past(R"({"p":"[[[[{{{{"})", 1), std::nullopt);
  EXPECT_EQ(find_json_nesting_past(R"({"p":"a\"[[[["})", 1), std::nullopt);
  EXPECT_EQ(find_json_nesting_past(R"({"p":"a\\"}[)", 1), std::nullopt);  // depth returns to 0
  EXPECT_EQ(find_json_nesting_past(R"({"p":"a\\",[[]})", 2), std::optional<size_t>(12));
}

TEST(JsonDepth, A100000DeepRowIsCaughtWithoutRecursion) {
  const std::string row = R"({"prompt":"x","meta":)" + nested(100000) + "}";
  const auto offset = find_json_nesting_past(row);
  ASSERT_TRUE(offset.has_value());
  EXPECT_EQ(row[*offset], '[');
  EXPECT_EQ(*offset, 21u + kMaxJsonDepth - 1);  // the object is level 1, the first [ at 21 level 2
}

TEST(JsonDepth, TextPositionCountsLinesAndColumnsFromOne) {
  EXPECT_EQ(text_position("abc", 0), "line 1, column 1");
  EXPECT_EQ(text_position("ab\ncd\nef", 7), "line 3, column 2");
  EXPECT_EQ(text_position("ab\n", 3), "line 2, column 1");
}

}  // namespace
}  // namespace sluice
