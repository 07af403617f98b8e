// dependentSchemas (and draft-04..07's dependencies with schema values): a property's presence
// brings a schema that applies to the whole object.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/grammar/json_schema_grammar.h"
#include "tests/unit/grammar/grammar_test_support.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

bool dependent_accepts(const std::string& schema, const std::string& text) {
  return test::grammar_accepts(json_schema_grammar(schema, "s.json"), text);
}

TEST(JsonSchemaDependent, APresentPropertyBringsItsSchema) {
  const std::string schema =
      R"({"type":"object","properties":{"kind":{"type":"string"},)"
      R"("website":{"type":"string"}},"required":["kind"],)"
      R"("additionalProperties":false,)"
      R"("dependentSchemas":{"website":{"properties":{"kind":{"const":"site"}}}}})";
  EXPECT_TRUE(dependent_accepts(schema, R"({"kind":"site","website":"x"})"));
  EXPECT_TRUE(dependent_accepts(schema, R"({"kind":"person"})"));
  EXPECT_TRUE(dependent_accepts(schema, R"({"kind":"site"})"));
  EXPECT_FALSE(dependent_accepts(schema, R"({"kind":"person","website":"x"})"));
}

TEST(JsonSchemaDependent, DraftSevenDependenciesAndSeveralAtOnce) {
  const std::string schema =
      R"({"$schema":"http://json-schema.org/draft-07/schema#","type":"object",)"
      R"("properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}},)"
      R"("additionalProperties":false,)"
      R"("dependencies":{"a":{"required":["b"]},"c":{"properties":{"b":{"maximum":3}}},)"
      R"("b":["c"]}})";
  // ({} is valid too, but dependentRequired's narrowing makes b's dependency c required.)
  EXPECT_TRUE(dependent_accepts(schema, R"({"a":1,"b":2,"c":3})"));
  EXPECT_FALSE(dependent_accepts(schema, R"({"a":1})"));              // a needs b
  EXPECT_FALSE(dependent_accepts(schema, R"({"a":1,"b":2})"));        // b needs c (array form)
  EXPECT_FALSE(dependent_accepts(schema, R"({"a":1,"b":4,"c":3})"));  // c caps b
  EXPECT_TRUE(dependent_accepts(schema, R"({"c":3})"));
}

TEST(JsonSchemaDependent, ImpossibleOrTooManyDependencies) {
  // A present "x" would need x to be a string and an integer: x is never written.
  const std::string never = R"({"type":"object","properties":{"x":{"type":"string"}},)"
                            R"("dependentSchemas":{"x":{"properties":{"x":{"type":"integer"}}}}})";
  EXPECT_TRUE(dependent_accepts(never, R"({})"));
  EXPECT_FALSE(dependent_accepts(never, R"({"x":"s"})"));
  std::string many = R"({"type":"object","dependentSchemas":{)";
  for (int i = 0; i < 5; ++i)
    many += (i ? "," : "") + std::string("\"p") + char('0' + i) + "\":{\"required\":[\"q\"]}";
  many += "}}";
  EXPECT_THAT(
      test::error_message([&] { json_schema_grammar(many, "s.json"); }),
      HasSubstr("s.json: /dependentSchemas: unsupported keyword 'dependentSchemas' (more than 4"));
  JsonSchemaNotes notes;
  json_schema_grammar(many, "s.json", {.mode = SchemaMode::BestEffort}, &notes);
  ASSERT_EQ(notes.dropped.size(), 1U);
  EXPECT_EQ(notes.dropped[0].pointer, "/dependentSchemas");
}

}  // namespace
}  // namespace sluice
