// The JSON grammar options: --schema-mode best-effort (a keyword the grammar cannot enforce is
// dropped with a note instead of refusing the schema) and --json-whitespace compact (only the
// separators JSON.stringify writes).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "engine/core/error.h"
#include "engine/grammar/grammar_source.h"
#include "engine/grammar/json_schema_grammar.h"
#include "tests/unit/grammar/grammar_test_support.h"

namespace sluice {
namespace {

using ::testing::AnyOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr JsonGrammarOptions kBestEffort{.mode = SchemaMode::BestEffort};
constexpr JsonGrammarOptions kCompact{.whitespace = JsonWhitespace::Compact};

// A schema with two keywords a grammar cannot enforce (uniqueItems of free strings, a multipleOf
// that is not whole) beside ones it can.
constexpr const char* kTwoRefusals = R"({
  "type": "object",
  "properties": {
    "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 3},
    "price": {"type": "number", "multipleOf": 0.01, "minimum": 0}
  },
  "required": ["tags", "price"],
  "additionalProperties": false
})";

TEST(JsonSchemaModes, StrictRefusesNamingTheKeywordAndItsPointer) {
  try {
    json_schema_grammar(kTwoRefusals, "s.json");
    FAIL() << "the schema was accepted";
  } catch (const SchemaRefusal& refusal) {
    EXPECT_THAT(refusal.keyword_pointer(),
                AnyOf("/properties/tags/uniqueItems", "/properties/price/multipleOf"));
    EXPECT_THAT(refusal.what(), HasSubstr("s.json: " + refusal.keyword_pointer() + ": "));
  }
}

TEST(JsonSchemaModes, BestEffortDropsEachRefusedKeywordWithANote) {
  JsonSchemaNotes notes;
  const Grammar grammar = json_schema_grammar(kTwoRefusals, "s.json", kBestEffort, &notes);
  std::map<std::string, JsonSchemaNote> dropped;
  for (const JsonSchemaNote& note : notes.dropped) dropped[note.pointer] = note;
  ASSERT_EQ(dropped.size(), 2U);
  EXPECT_EQ(dropped["/properties/tags/uniqueItems"].keyword, "uniqueItems");
  EXPECT_EQ(dropped["/properties/price/multipleOf"].keyword, "multipleOf");
  EXPECT_THAT(dropped["/properties/price/multipleOf"].reason, HasSubstr("whole divisor"));
  EXPECT_EQ(grammar.notes(), notes.lines());
  EXPECT_THAT(grammar.notes(), Contains(HasSubstr("'uniqueItems' dropped")));
  // The rest is still enforced: the dropped keywords no longer are.
  EXPECT_TRUE(test::grammar_accepts(grammar, R"({"tags":["a","a"],"price":0.333})"));
  EXPECT_FALSE(test::grammar_accepts(grammar, R"({"tags":["a","a","b","c"],"price":1})"));
  EXPECT_FALSE(test::grammar_accepts(grammar, R"({"tags":[],"price":-1})"));
  EXPECT_FALSE(test::grammar_accepts(grammar, R"({"tags":[]})"));
}

TEST(JsonSchemaModes, BestEffortDropsOnlyTheConflictingAllOfBranch) {
  const std::string schema =
      R"({"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},)"
      R"({"patternProperties":{"^x":{"type":"string"}}},{"maxProperties":1}]})";
  EXPECT_THROW(json_schema_grammar(schema, "s.json"), SchemaRefusal);
  JsonSchemaNotes notes;
  const Grammar grammar = json_schema_grammar(schema, "s.json", kBestEffort, &notes);
  ASSERT_EQ(notes.dropped.size(), 1U);
  EXPECT_EQ(notes.dropped[0].keyword, "allOf");
  EXPECT_EQ(notes.dropped[0].pointer, "/allOf/1");
  // The branches that stayed are still merged and enforced.
  EXPECT_TRUE(test::grammar_accepts(grammar, R"({"a":1})"));
  EXPECT_FALSE(test::grammar_accepts(grammar, R"({"a":"s"})"));
  EXPECT_FALSE(test::grammar_accepts(grammar, R"({"a":1,"b":2})"));
}

TEST(JsonSchemaModes, BestEffortFindsAKeywordThatAnAllOfBranchBrought) {
  const std::string schema = R"({"allOf":[{"type":"string","maxLength":4},)"
                             R"({"type":"string","format":"email"}]})";
  JsonSchemaNotes notes;
  const Grammar grammar = json_schema_grammar(schema, "s.json", kBestEffort, &notes);
  ASSERT_EQ(notes.dropped.size(), 1U);
  EXPECT_EQ(notes.dropped[0].pointer, "/allOf/1/format");
  EXPECT_TRUE(test::grammar_accepts(grammar, R"("abcd")"));
  EXPECT_FALSE(test::grammar_accepts(grammar, R"("abcde")"));
}

TEST(JsonSchemaModes, BestEffortStillRefusesWhatIsNotAKeywordItCannotEnforce) {
  for (const char* schema : {R"({"type":"integer","const":"no"})", R"({"$ref":"#/nowhere"})",
                             R"({"type":"string","maxLength":-1})", "{not json"}) {
    EXPECT_THROW(json_schema_grammar(schema, "s.json", kBestEffort), Error) << schema;
  }
}

TEST(JsonSchemaModes, NotesAreKeptOnTheGrammar) {
  const Grammar grammar = json_schema_grammar(
      R"({"type":"object","x-order":1,"properties":{"a":{"type":"string","format":"int32"}}})",
      "s.json");
  EXPECT_THAT(
      grammar.notes(),
      ElementsAre("/x-order: unknown keyword ('x-order' ignored)",
                  "/properties/a/format: format 'int32' is not checked ('format' ignored)"));
}

TEST(JsonSchemaModes, CompactWhitespaceAllowsOnlyTheSeparators) {
  const std::string schema = R"({"type":"object","properties":{"a":{"type":"array",)"
                             R"("items":{"type":"integer"}}},"required":["a"]})";
  const Grammar compact = json_schema_grammar(schema, "s.json", kCompact);
  const Grammar flexible = json_schema_grammar(schema, "s.json");
  EXPECT_TRUE(test::grammar_accepts(compact, R"({"a":[1,2]})"));
  EXPECT_TRUE(test::grammar_accepts(compact, R"( {"a":[1,2]})"));  // SentencePiece's leading space
  for (const char* spaced : {R"({ "a":[1,2]})", R"({"a": [1,2]})", R"({"a":[1, 2]})",
                             "{\"a\":[1,2]\n}", R"({"a":[1,2] })"}) {
    EXPECT_FALSE(test::grammar_accepts(compact, spaced)) << spaced;
    EXPECT_TRUE(test::grammar_accepts(flexible, spaced)) << spaced;
  }
  const Grammar object = json_object_grammar(JsonWhitespace::Compact);
  EXPECT_TRUE(test::grammar_accepts(object, R"({"k":{"x":[null,true]}})"));
  EXPECT_FALSE(test::grammar_accepts(object, R"({"k": 1})"));
}

TEST(JsonSchemaModes, GrammarSourcesCarryTheOptions) {
  GrammarSource source{GrammarSourceKind::JsonSchema, "s.json", kTwoRefusals, {}};
  EXPECT_THROW(build_grammar(source), SchemaRefusal);
  source.schema_mode = SchemaMode::BestEffort;
  source.whitespace = JsonWhitespace::Compact;
  const Grammar grammar = build_grammar(source);
  EXPECT_EQ(grammar.notes().size(), 2U);
  EXPECT_TRUE(test::grammar_accepts(grammar, R"({"tags":["x"],"price":2})"));
  EXPECT_FALSE(test::grammar_accepts(grammar, R"({"tags":["x"], "price":2})"));
  EXPECT_EQ(parse_json_whitespace("compact"), JsonWhitespace::Compact);
  EXPECT_EQ(parse_schema_mode("best-effort"), SchemaMode::BestEffort);
  EXPECT_THAT(test::error_message([] { parse_schema_mode("loose"); }),
              HasSubstr("strict or best-effort"));
}

}  // namespace
}  // namespace sluice
