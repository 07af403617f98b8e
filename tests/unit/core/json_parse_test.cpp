#include "engine/core/json_parse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/json_depth.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(JsonParse, GoodTextParses) {
  Json value;
  EXPECT_EQ(try_parse_json(R"({"a": [1, "x"], "b": 1e300})", value), std::nullopt);
  EXPECT_EQ(value["a"][1], "x");
  EXPECT_EQ(parse_json_text<nlohmann::json>("[1, 2]", "f.json").size(), 2u);
}

TEST(JsonParse, SyntaxErrorPointsAtTheOffendingByte) {
  Json value;
  const auto failure = try_parse_json(R"({"a": 1,,})", value);
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->offset, 8u);  // the second comma
  EXPECT_THAT(failure->description, HasSubstr("unexpected ','"));
  EXPECT_THAT(failure->description, Not(HasSubstr("json.exception")));
  EXPECT_THAT(failure->description, Not(HasSubstr("column")));  // the caller places it

  const auto truncated = try_parse_json(R"({"a": 1)", value);
  ASSERT_TRUE(truncated.has_value());
  EXPECT_EQ(truncated->offset, 7u);  // the end of the text
  const auto empty = try_parse_json("", value);
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->offset, 0u);
}

TEST(JsonParse, NumberOutOfRangePointsAtTheNumber) {
  Json value;
  const auto failure = try_parse_json(R"({"a": 1, "b": -1e400 })", value);
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->offset, 14u);
  EXPECT_THAT(failure->description, HasSubstr("-1e400"));
  EXPECT_THAT(failure->description, HasSubstr("out of range"));
}

TEST(JsonParse, NestingPastTheLimitPointsAtTheFirstBracketPastIt) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  Json value;
  const auto failure = try_parse_json(deep, value);
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->offset, static_cast<size_t>(kMaxJsonDepth));  // 0-based: level 257
  EXPECT_THAT(failure->description, HasSubstr("nested deeper than 256"));
  const std::string at_limit = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_EQ(try_parse_json(at_limit, value), std::nullopt);
}

TEST(JsonParse, ParseJsonTextNamesTheFileLineAndColumn) {
  EXPECT_THAT([] { parse_json_text<Json>("{\n  \"a\": tru\n}", "dir/config.json"); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("dir/config.json: not valid JSON at line 2, column ")));
}

TEST(JsonParse, TypeNames) {
  EXPECT_STREQ(json_type_name(Json::object()), "an object");
  EXPECT_STREQ(json_type_name(Json::array()), "an array");
  EXPECT_STREQ(json_type_name(Json("x")), "a string");
  EXPECT_STREQ(json_type_name(Json(1.5)), "a number");
  EXPECT_STREQ(json_type_name(Json(true)), "a boolean");
  EXPECT_STREQ(json_type_name(Json(nullptr)), "null");
  EXPECT_STREQ(json_type_name(nlohmann::json(3)), "a number");
}

}  // namespace
}  // namespace sluice
