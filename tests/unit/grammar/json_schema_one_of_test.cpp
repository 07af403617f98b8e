// oneOf: a value must match exactly one branch. The grammar writes the branches as a choice, so
// it takes a oneOf only when no value it writes can match two of them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/grammar/json_schema_grammar.h"
#include "tests/unit/grammar/grammar_test_support.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

bool one_of_accepts(const std::string& schema, const std::string& text) {
  return test::grammar_accepts(json_schema_grammar(schema, "s.json"), text);
}

TEST(JsonSchemaOneOf, BranchesThatCannotOverlapAreWrittenAsAChoice) {
  const std::string by_type = R"({"oneOf":[{"type":"string"},{"type":"array","items":{}}]})";
  EXPECT_TRUE(one_of_accepts(by_type, R"("x")"));
  EXPECT_TRUE(one_of_accepts(by_type, "[1]"));
  const std::string by_const =
      R"({"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"integer"}},)"
      R"("required":["kind"]},{"type":"object","properties":{"kind":{"const":"b"}},)"
      R"("required":["kind"]}]})";
  EXPECT_TRUE(one_of_accepts(by_const, R"({"kind":"a","x":1})"));
  EXPECT_TRUE(one_of_accepts(by_const, R"({"kind":"b"})"));
}

TEST(JsonSchemaOneOf, OverlappingBranchesAreRefusedOrWrittenAsAnyOfBestEffort) {
  const std::string numbers = R"({"oneOf":[{"type":"number"},{"type":"integer"}]})";
  EXPECT_THAT(test::error_message([&] { json_schema_grammar(numbers, "s.json"); }),
              HasSubstr("s.json: /oneOf: unsupported keyword 'oneOf' (branches 0 and 1"));
  JsonSchemaNotes notes;
  const Grammar grammar =
      json_schema_grammar(numbers, "s.json", {.mode = SchemaMode::BestEffort}, &notes);
  ASSERT_EQ(notes.dropped.size(), 1U);
  EXPECT_EQ(notes.dropped[0].pointer, "/oneOf");
  EXPECT_THAT(notes.dropped[0].reason, HasSubstr("written as anyOf"));
  EXPECT_TRUE(test::grammar_accepts(grammar, "2"));
}

TEST(JsonSchemaOneOf, BranchesToldApartByARequiredPropertyLeaveTheOthersOut) {
  const std::string shapes =
      R"({"type":"object","properties":{"radius":{"type":"number"},"length":{"type":"number"},)"
      R"("width":{"type":"number"},"base":{"type":"number"}},)"
      R"("oneOf":[{"required":["radius"]},{"required":["length","width"]},{"required":["base"]}]})";
  EXPECT_TRUE(one_of_accepts(shapes, R"({"radius":1})"));
  EXPECT_TRUE(one_of_accepts(shapes, R"({"length":1,"width":2})"));
  EXPECT_TRUE(one_of_accepts(shapes, R"({"base":3})"));
  // Valid for two branches: never written, whichever branch it starts from.
  EXPECT_FALSE(one_of_accepts(shapes, R"({"radius":1,"length":1,"width":2})"));
  EXPECT_FALSE(one_of_accepts(shapes, R"({"length":1,"radius":1,"width":2})"));
  EXPECT_FALSE(one_of_accepts(shapes, R"({"radius":1,"base":2})"));
  // A branch that needs all of another's required properties cannot be told apart.
  const std::string nested = R"({"type":"object","oneOf":[{"required":["a"]},)"
                             R"({"required":["a","b"]}]})";
  EXPECT_THAT(test::error_message([&] { json_schema_grammar(nested, "s.json"); }),
              HasSubstr("unsupported keyword 'oneOf'"));
}

}  // namespace
}  // namespace sluice
