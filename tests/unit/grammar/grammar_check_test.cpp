#include "engine/grammar/grammar_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/grammar/text_spelling.h"
#include "engine/tokenizer/tokenizer_loader.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

GrammarSource schema_source(std::string text, SchemaMode mode = SchemaMode::Strict) {
  GrammarSource source;
  source.kind = GrammarSourceKind::JsonSchema;
  source.name = "s.json";
  source.text = std::move(text);
  source.schema_mode = mode;
  return source;
}

std::unique_ptr<Tokenizer> stories_tokenizer() {
  return load_tokenizer_file(test::shared_path("models/stories260K/llama2c/tok512.model"));
}

TEST(GrammarCheck, ReportsEnforcedIgnoredAndRefusedKeywordsByPointer) {
  const GrammarCompileReport report = compile_for_check(schema_source(
      R"({"type":"object","properties":{"a":{"type":"integer","minimum":0,"x-order":1}},
          "required":["a"]})"));
  ASSERT_TRUE(report.is_compiled()) << report.error;
  EXPECT_THAT(report.summary, HasSubstr("json_schema (strict, flexible whitespace)"));
  ASSERT_EQ(report.enforced.size(), 2u);
  EXPECT_EQ(report.enforced[0].pointer, "");
  EXPECT_EQ(report.enforced[0].keywords,
            (std::vector<std::string>{"type", "properties", "required"}));
  EXPECT_EQ(report.enforced[1].pointer, "/properties/a");
  EXPECT_EQ(report.enforced[1].keywords, (std::vector<std::string>{"type", "minimum"}));
  ASSERT_EQ(report.ignored.size(), 1u);
  EXPECT_EQ(report.ignored[0].pointer, "/properties/a/x-order");

  const char* refused = R"({"properties":{"tags":{"if":{"type":"array"}}}})";
  const GrammarCompileReport strict = compile_for_check(schema_source(refused));
  EXPECT_FALSE(strict.is_compiled());
  EXPECT_TRUE(strict.is_refused());
  EXPECT_EQ(strict.refused_pointer, "/properties/tags/if");
  const GrammarCompileReport lenient =
      compile_for_check(schema_source(refused, SchemaMode::BestEffort));
  ASSERT_TRUE(lenient.is_compiled()) << lenient.error;
  ASSERT_EQ(lenient.dropped.size(), 1u);
  EXPECT_EQ(lenient.dropped[0].pointer, "/properties/tags/if");
}

TEST(GrammarCheck, ReportsErrorsWithoutThrowing) {
  const GrammarCompileReport bad_json = compile_for_check(schema_source("{\"type\":"));
  EXPECT_FALSE(bad_json.is_compiled());
  EXPECT_FALSE(bad_json.is_refused());
  EXPECT_THAT(bad_json.error, HasSubstr("s.json"));
  GrammarSource gbnf;
  gbnf.kind = GrammarSourceKind::Gbnf;
  gbnf.name = "g.gbnf";
  gbnf.text = "root ::= nothing";
  EXPECT_THAT(compile_for_check(gbnf).error, HasSubstr("g.gbnf"));
}

TEST(GrammarCheck, ChecksTextsTokenByTokenWithTheSchemaVerdictBeside) {
  const auto tokenizer = stories_tokenizer();
  const GrammarSource source = schema_source(
      R"({"type":"object","properties":{"n":{"type":"number","maximum":5}},"required":["n"]})");
  const GrammarCompileReport report = compile_for_check(source);
  ASSERT_TRUE(report.is_compiled()) << report.error;
  const GrammarTextCheck check(source, report, tokenizer.get());

  const TextVerdict good = check.check(R"({"n":3})");
  EXPECT_TRUE(good.is_accepted) << good.reason;
  EXPECT_GT(good.num_tokens, 1u);
  ASSERT_TRUE(good.by_source.has_value());
  EXPECT_TRUE(good.by_source->is_valid);
  EXPECT_EQ(describe_text_verdict(good).rfind("grammar: accepted (", 0), 0u);

  const TextVerdict too_big = check.check(R"({"n":7})");
  EXPECT_FALSE(too_big.is_accepted);
  EXPECT_LE(too_big.byte_offset, 5u);  // the token that holds the 7 starts at or before it
  EXPECT_FALSE(too_big.is_mask_mismatch);
  EXPECT_FALSE(too_big.by_source->is_valid);

  // 1e0 is valid for the schema, but a bounded number is never written with an exponent.
  const TextVerdict narrowed = check.check(R"({"n":1e0})");
  EXPECT_FALSE(narrowed.is_accepted);
  EXPECT_TRUE(narrowed.by_source->is_valid);
  EXPECT_THAT(describe_text_verdict(narrowed), HasSubstr("schema: valid (a narrowing)"));

  const TextVerdict unfinished = check.check(R"({"n":3)");
  EXPECT_FALSE(unfinished.is_accepted);
  EXPECT_EQ(unfinished.token_idx, unfinished.num_tokens);
  EXPECT_EQ(unfinished.byte_offset, 6u);
  EXPECT_THAT(unfinished.reason, HasSubstr("ends before the grammar is complete"));
}

TEST(GrammarCheck, ChecksBytesWithoutATokenizer) {
  GrammarSource source;
  source.kind = GrammarSourceKind::Regex;
  source.name = "--regex";
  source.text = "[a-c]+x";
  const GrammarCompileReport report = compile_for_check(source);
  ASSERT_TRUE(report.is_compiled()) << report.error;
  const GrammarTextCheck check(source, report, nullptr);
  EXPECT_TRUE(check.is_byte_level());
  const TextVerdict accepted = check.check("abcx");
  EXPECT_TRUE(accepted.is_accepted);
  EXPECT_EQ(accepted.num_tokens, 4u);
  EXPECT_FALSE(accepted.by_source.has_value());
  const TextVerdict refused = check.check("abdx");
  EXPECT_FALSE(refused.is_accepted);
  EXPECT_EQ(refused.token_idx, 2u);
  EXPECT_EQ(refused.byte_offset, 2u);
}

TEST(TextSpeller, SpellsTheTextExactlyDummyPrefixAndNormalizationIncluded) {
  const auto tokenizer = stories_tokenizer();
  auto vocabulary = TokenVocabulary::from_tokenizer(*tokenizer);
  const TextSpeller speller(tokenizer.get(), vocabulary);
  for (const std::string text : {"{\"a\": 1}", "Once upon a time", "two  spaces", " lead", "é😀"}) {
    const TextSpelling spelling = speller.spell(text);
    ASSERT_TRUE(spelling.is_complete) << text;
    std::string bytes;
    for (size_t i = 0; i < spelling.token_ids.size(); ++i) {
      EXPECT_EQ(spelling.byte_offsets[i], bytes.size()) << text;
      bytes += vocabulary->token_bytes(spelling.token_ids[i]);
    }
    EXPECT_EQ(bytes, text);
  }
  // SentencePiece's dummy prefix is spelled away silently; a normalized text is said so.
  EXPECT_EQ(speller.spell("Once").note, "");
  EXPECT_THAT(speller.spell("two  spaces").note, HasSubstr("longest tokens"));
}

}  // namespace
}  // namespace sluice
