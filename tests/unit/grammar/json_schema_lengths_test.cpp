// JSON Schema strings whose pattern or format stands beside minLength / maxLength, required
// properties that only patternProperties names, and numeric bounds past what the grammar writes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/grammar/json_schema_grammar.h"
#include "tests/unit/grammar/grammar_test_support.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

bool lengths_accepts(const std::string& schema, const std::string& text) {
  return test::grammar_accepts(json_schema_grammar(schema, "s.json"), text);
}

std::string lengths_error(const std::string& schema) {
  return test::error_message([&] { json_schema_grammar(schema, "s.json"); });
}

TEST(JsonSchemaLengths, PatternBesideLengthBounds) {
  const std::string id = R"({"type":"string","pattern":"^[A-Z][a-z0-9_]+$","minLength":3,)"
                         R"("maxLength":6})";
  EXPECT_TRUE(lengths_accepts(id, R"("Abc")"));
  EXPECT_TRUE(lengths_accepts(id, R"("Ab_12")"));
  EXPECT_FALSE(lengths_accepts(id, R"("Ab")"));       // too short
  EXPECT_FALSE(lengths_accepts(id, R"("Abcdefg")"));  // too long
  EXPECT_FALSE(lengths_accepts(id, R"("abc")"));      // not the pattern
  // Escaped characters count once: a quote is one character of the string.
  const std::string quoted = R"({"type":"string","pattern":"^[\"a]+$","maxLength":2})";
  EXPECT_TRUE(lengths_accepts(quoted, R"("\"\"")"));
  EXPECT_FALSE(lengths_accepts(quoted, R"("\"a\"")"));
  EXPECT_THAT(lengths_error(R"({"type":"string","pattern":"^abc$","maxLength":2})"),
              HasSubstr("s.json: /pattern: no string of 'pattern' with a length"));
}

TEST(JsonSchemaLengths, FormatBesideLengthBounds) {
  const std::string email = R"({"type":"string","format":"email","maxLength":12})";
  EXPECT_TRUE(lengths_accepts(email, R"("ab@cd.ef")"));
  EXPECT_FALSE(lengths_accepts(email, R"("abcdef@ghijkl.mn")"));
  EXPECT_FALSE(lengths_accepts(email, R"("not an email")"));
  const std::string date = R"({"type":"string","format":"date","minLength":1,"maxLength":255})";
  EXPECT_TRUE(lengths_accepts(date, R"("2024-02-28")"));
  EXPECT_FALSE(lengths_accepts(date, R"("2024-02-30")"));
  const std::string uri = R"({"type":"string","format":"uri","minLength":14})";
  EXPECT_TRUE(lengths_accepts(uri, R"("https://abcdefgh.com")"));
  EXPECT_FALSE(lengths_accepts(uri, R"("http://ab.com")"));
}

TEST(JsonSchemaLengths, RequiredPropertyNamedOnlyByAPattern) {
  // additionalProperties does not apply to "line1": the pattern's schema does.
  const std::string address =
      R"({"type":"object","properties":{"city":{"type":"string"}},)"
      R"("patternProperties":{"^line[1-3]$":{"type":"string","maxLength":3}},)"
      R"("additionalProperties":false,"required":["city","line1"]})";
  EXPECT_TRUE(lengths_accepts(address, R"({"city":"x","line1":"abc"})"));
  EXPECT_FALSE(lengths_accepts(address, R"({"city":"x","line1":"abcd"})"));
  EXPECT_FALSE(lengths_accepts(address, R"({"city":"x","line1":1})"));
  EXPECT_FALSE(lengths_accepts(address, R"({"city":"x"})"));
  const std::string unmatched = R"({"type":"object","patternProperties":{"^a":{}},)"
                                R"("additionalProperties":false,"required":["b"]})";
  EXPECT_THAT(lengths_error(unmatched), HasSubstr("required property 'b' can never be valid"));
}

TEST(JsonSchemaLengths, BoundsPastWhatTheGrammarWritesAreNarrowed) {
  const std::string id = R"({"type":"integer","minimum":0,"maximum":9223372036854775807})";
  EXPECT_TRUE(lengths_accepts(id, "123456789012345"));
  EXPECT_FALSE(lengths_accepts(id, "-1"));
  EXPECT_FALSE(lengths_accepts(id, "12345678901234567"));
  const std::string low = R"({"type":"number","minimum":-1e300,"maximum":5})";
  EXPECT_TRUE(lengths_accepts(low, "-12.5"));
  EXPECT_FALSE(lengths_accepts(low, "6"));
  EXPECT_THAT(lengths_error(R"({"type":"integer","minimum":1e20})"),
              HasSubstr("/minimum: 'minimum' past ±1e15 is not supported"));
}

}  // namespace
}  // namespace sluice
