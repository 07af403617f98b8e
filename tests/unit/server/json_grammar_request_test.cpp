// A request's JSON grammar options: the server's defaults (sluice serve --schema-mode,
// --json-whitespace), a request's own schema_mode / json_whitespace over them, given only to JSON
// grammars; a bad name is a 400 naming the parameter.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "app/server/api_error.h"
#include "app/server/completion_request.h"
#include "engine/core/error.h"
#include "engine/grammar/json_schema_keywords.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

constexpr JsonGrammarOptions kServerBestEffort{.mode = SchemaMode::BestEffort};

// A chat body whose response_format schema has a keyword no grammar enforces exactly (a
// multipleOf that is not whole), with extra fields.
std::string unenforceable_chat(const std::string& extra = "") {
  return R"({"model": "m", "messages": [{"role": "user", "content": "hi"}],
      "response_format": {"type": "json_schema", "json_schema": {"schema":
        {"type": "object", "properties": {"n": {"type": "number", "multipleOf": 0.5}}}}})" +
         extra + "}";
}

GrammarSource grammar_of(const std::string& body, const JsonGrammarOptions& defaults) {
  const CompletionRequest r =
      parse_completion_request(parse_request_body(body), CompletionKind::Chat, {}, defaults);
  if (!r.grammar) throw std::runtime_error("no grammar");
  return *r.grammar;
}

// Catches a server default that never reaches the grammar, and a request that cannot ask for
// strict on a best-effort server.
TEST(JsonGrammarRequest, TheServersModeIsTheDefaultAndARequestsOwnWins) {
  const GrammarSource loose = grammar_of(unenforceable_chat(), kServerBestEffort);
  EXPECT_EQ(loose.schema_mode, SchemaMode::BestEffort);
  const Grammar grammar = build_grammar(loose);  // accepted: the keyword is dropped with a note
  ASSERT_FALSE(grammar.notes().empty());
  EXPECT_THAT(grammar.notes().front(), HasSubstr("/properties/n/multipleOf"));

  const GrammarSource strict =
      grammar_of(unenforceable_chat(R"(, "schema_mode": "strict")"), kServerBestEffort);
  EXPECT_EQ(strict.schema_mode, SchemaMode::Strict);
  EXPECT_THROW(build_grammar(strict), SchemaRefusal);
  EXPECT_EQ(grammar_of(unenforceable_chat(), {}).schema_mode, SchemaMode::Strict);
  EXPECT_EQ(grammar_of(unenforceable_chat(R"(, "schema_mode": "best-effort")"), {}).schema_mode,
            SchemaMode::BestEffort);
}

// Catches whitespace applied to grammars it means nothing for (their cache keys would split).
TEST(JsonGrammarRequest, WhitespaceGoesToJsonGrammarsOnly) {
  const std::string object =
      R"({"model": "m", "prompt": "x", "structured_outputs": {"json_object": true},
          "json_whitespace": "compact"})";
  const CompletionRequest r =
      parse_completion_request(parse_request_body(object), CompletionKind::Text, {});
  ASSERT_TRUE(r.grammar);
  EXPECT_EQ(r.grammar->whitespace, JsonWhitespace::Compact);
  const std::string regex =
      R"({"model": "m", "prompt": "x", "structured_outputs": {"regex": "a"}})";
  const CompletionRequest plain = parse_completion_request(
      parse_request_body(regex), CompletionKind::Text, {},
      {.whitespace = JsonWhitespace::Compact, .mode = SchemaMode::BestEffort});
  ASSERT_TRUE(plain.grammar);
  EXPECT_EQ(plain.grammar->whitespace, JsonWhitespace::Flexible);
  EXPECT_EQ(plain.grammar->schema_mode, SchemaMode::Strict);
}

TEST(JsonGrammarRequest, ABadNameIsA400NamingTheParameter) {
  for (const auto& [extra, param, accepted] :
       {std::tuple{R"(, "schema_mode": "lax")", "schema_mode", "strict or best-effort"},
        std::tuple{R"(, "json_whitespace": 1)", "json_whitespace", "must be a string"},
        std::tuple{R"(, "json_whitespace": "tight")", "json_whitespace", "flexible or compact"}}) {
    try {
      grammar_of(unenforceable_chat(extra), {});
      ADD_FAILURE() << "accepted " << extra;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status(), 400);
      EXPECT_EQ(e.param(), param);
      EXPECT_THAT(e.what(), HasSubstr(accepted));
    }
  }
}

}  // namespace
}  // namespace sluice::test
