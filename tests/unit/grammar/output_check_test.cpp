// A generated output judged by what its grammar source means (engine/grammar/output_check.h): a
// JSON Schema by the full validator — so an output the grammar let through but the schema refuses
// is invalid, with the failure's pointer as the reason — a JSON object by parsing, a regex by its
// grammar.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "engine/grammar/json_schema_grammar.h"
#include "engine/grammar/output_check.h"
#include "engine/grammar/regex_grammar.h"

namespace sluice {
namespace {

GrammarSource schema_source(const std::string& text) {
  return GrammarSource{.kind = GrammarSourceKind::JsonSchema, .name = "s.json", .text = text};
}

TEST(OutputCheck, ASchemaIsJudgedByTheValidatorNotTheGrammar) {
  const std::string schema = R"({"type":"string","minLength":3,"enum":["a","abcd"]})";
  const OutputCheck check(schema_source(schema),
                          std::make_shared<const Grammar>(json_schema_grammar(schema, "s.json")));
  EXPECT_TRUE(check.check(R"("abcd")").is_valid);
  const OutputVerdict short_one = check.check(R"("a")");
  EXPECT_FALSE(short_one.is_valid);
  EXPECT_NE(short_one.reason.find("minLength"), std::string::npos) << short_one.reason;
}

TEST(OutputCheck, TheReasonNamesWhereTheOutputFails) {
  const std::string schema =
      R"({"type":"object","properties":{"age":{"type":"integer","minimum":0}},"required":["age"]})";
  const OutputCheck check(schema_source(schema), nullptr);
  EXPECT_TRUE(check.check(R"({"age": 3})").is_valid);
  const OutputVerdict negative = check.check(R"({"age": -1})");
  EXPECT_FALSE(negative.is_valid);
  EXPECT_NE(negative.reason.find("/age"), std::string::npos) << negative.reason;
  const OutputVerdict cut = check.check(R"({"age": )");
  EXPECT_FALSE(cut.is_valid);
  EXPECT_NE(cut.reason.find("not valid JSON at line 1"), std::string::npos) << cut.reason;
}

TEST(OutputCheck, AJsonObjectIsParsed) {
  const OutputCheck check(GrammarSource{.kind = GrammarSourceKind::JsonObject, .name = "o"},
                          nullptr);
  EXPECT_TRUE(check.check(R"( {"a": [1, 2]} )").is_valid);
  EXPECT_FALSE(check.check("[1]").is_valid);
  EXPECT_FALSE(check.check(R"({"a": )").is_valid);
}

TEST(OutputCheck, ARegexIsJudgedByItsGrammar) {
  const GrammarSource source{.kind = GrammarSourceKind::Regex, .name = "re", .text = "[a-c]{2}"};
  const OutputCheck check(source, std::make_shared<const Grammar>(regex_grammar("[a-c]{2}", "re")));
  EXPECT_TRUE(check.check("ab").is_valid);
  EXPECT_FALSE(check.check("abc").is_valid);
  EXPECT_THROW(OutputCheck(source, nullptr), Error);
}

}  // namespace
}  // namespace sluice
