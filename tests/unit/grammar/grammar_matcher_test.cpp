#include "engine/grammar/grammar_matcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "engine/grammar/choice_grammar.h"
#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/grammar_constraints.h"
#include "engine/grammar/json_schema_grammar.h"
#include "engine/grammar/regex_grammar.h"
#include "engine/tokenizer/tokenizer_loader.h"
#include "tests/support/test_paths.h"
#include "tests/unit/grammar/grammar_test_support.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const TokenVocabulary> load_vocabulary(const std::string& relative) {
  auto tokenizer = load_tokenizer_file(test::shared_path(relative));
  return TokenVocabulary::from_tokenizer(*tokenizer);
}

std::vector<uint32_t> brute_force_mask(const GrammarMatcher& matcher) {
  const TokenVocabulary& vocabulary = matcher.compiled().vocabulary();
  std::vector<uint32_t> mask(vocabulary.num_mask_words(), 0);
  for (int32_t id = 0; id < vocabulary.vocab_size(); ++id) {
    GrammarMatcher copy = matcher;
    if (copy.accept_token(id)) set_token_bit(mask, id);
  }
  return mask;
}

std::vector<int32_t> allowed_ids(std::span<const uint32_t> mask, int32_t vocab_size) {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < vocab_size; ++id) {
    if (test_token_bit(mask, id)) ids.push_back(id);
  }
  return ids;
}

// Walks num_steps random allowed tokens from the grammar's start, checking at every state that
// the cached mask equals the brute-force mask (every token fed to a fresh copy of the matcher).
void check_masks_on_random_walks(const Grammar& grammar,
                                 std::shared_ptr<const TokenVocabulary> vocabulary, int num_walks,
                                 int num_steps) {
  auto compiled = std::make_shared<CompiledGrammar>(grammar, vocabulary);
  int num_states = 0;
  for (int walk = 0; walk < num_walks; ++walk) {
    std::mt19937 rng(1234 + walk);
    GrammarMatcher matcher(compiled);
    for (int step = 0; step < num_steps; ++step) {
      std::vector<uint32_t> mask(vocabulary->num_mask_words(), 0);
      matcher.fill_next_token_mask(mask);
      std::vector<uint32_t> expected = brute_force_mask(matcher);
      ASSERT_EQ(allowed_ids(mask, vocabulary->vocab_size()),
                allowed_ids(expected, vocabulary->vocab_size()))
          << "walk " << walk << " step " << step;
      ++num_states;
      std::vector<int32_t> ids = allowed_ids(mask, vocabulary->vocab_size());
      ASSERT_FALSE(ids.empty()) << "walk " << walk << " step " << step;
      int32_t id = ids[std::uniform_int_distribution<size_t>(0, ids.size() - 1)(rng)];
      ASSERT_TRUE(matcher.accept_token(id));
      if (matcher.is_terminated()) break;
    }
  }
  EXPECT_GT(num_states, num_walks);
}

const char* kRecordSchema = R"({
  "type":"object",
  "properties":{
    "question":{"type":"string","maxLength":12},
    "answer":{"type":"string"},
    "difficulty":{"enum":["easy","medium","hard"]},
    "score":{"type":"integer","minimum":0,"maximum":100},
    "tags":{"type":"array","items":{"type":"string","maxLength":5},"maxItems":3}
  },
  "required":["question","difficulty"]})";

TEST(GrammarMatcher, MasksEqualBruteForceOnStories260K) {
  auto vocabulary = load_vocabulary("models/stories260K/llama2c/tok512.model");
  check_masks_on_random_walks(json_schema_grammar(kRecordSchema, "record.json"), vocabulary, 6, 40);
  check_masks_on_random_walks(json_object_grammar(), vocabulary, 6, 40);
  check_masks_on_random_walks(regex_grammar("(the|a) [a-z]{1,6}( [a-z]+)*\\.", "re"), vocabulary, 4,
                              20);
  check_masks_on_random_walks(parse_gbnf("root ::= \"Once\" ( \" \" word )+ \".\"\n"
                                         "word ::= [a-zA-Zé]+ | \"ж\" [^ ]",
                                         "g.gbnf"),
                              vocabulary, 4, 20);
  check_masks_on_random_walks(choice_grammar({"Once upon", "One day", "Lily"}, "choice"),
                              vocabulary, 4, 10);
}

TEST(GrammarMatcher, MasksEqualBruteForceOnTinyArchGgufVocabulary) {
  auto vocabulary = load_vocabulary("models/tiny-arch/qwen3/gguf/qwen3-F32.gguf");
  check_masks_on_random_walks(json_schema_grammar(kRecordSchema, "record.json"), vocabulary, 4, 40);
  check_masks_on_random_walks(json_object_grammar(), vocabulary, 4, 30);
}

TEST(GrammarMatcher, MasksEqualBruteForceOnLlama2Vocabulary) {
  auto vocabulary = load_vocabulary("tokenizers/llama2/tokenizer.model");
  check_masks_on_random_walks(json_schema_grammar(kRecordSchema, "record.json"), vocabulary, 1, 6);
  // Multi-byte characters split over byte-fallback tokens.
  check_masks_on_random_walks(parse_gbnf("root ::= [а-я😀]{1,4} \".\"", "g.gbnf"), vocabulary, 2, 6);
}

TEST(GrammarMatcher, TokensSpanSeveralTerminalsAndCharactersSpanTokens) {
  auto tokenizer =
      load_tokenizer_file(test::shared_path("models/stories260K/llama2c/tok512.model"));
  auto vocabulary = TokenVocabulary::from_tokenizer(*tokenizer);
  Grammar grammar = choice_grammar({" Once upon a time", " One"}, "choice");
  auto compiled = std::make_shared<CompiledGrammar>(grammar, vocabulary);
  GrammarMatcher matcher(compiled);
  std::vector<int32_t> ids = tokenizer->encode("Once upon a time", {.add_bos = false});
  ASSERT_LT(ids.size(), 16u);  // multi-character pieces
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    std::vector<uint32_t> mask(vocabulary->num_mask_words(), 0);
    matcher.fill_next_token_mask(mask);
    EXPECT_TRUE(test_token_bit(mask, ids[i])) << i;
    EXPECT_FALSE(test_token_bit(mask, tokenizer->eos_id())) << i;
    EXPECT_FALSE(test_token_bit(mask, tokenizer->bos_id())) << i;
    ASSERT_TRUE(matcher.accept_token(ids[i])) << i;
    text += vocabulary->token_bytes(ids[i]);
  }
  EXPECT_EQ(text, " Once upon a time");  // SentencePiece pieces carry their leading space
}

TEST(GrammarMatcher, CompleteGrammarAllowsOnlyStopTokens) {
  Grammar grammar = choice_grammar({"ab"}, "choice");
  auto compiled = std::make_shared<CompiledGrammar>(grammar, test::byte_vocabulary());
  GrammarMatcher matcher(compiled);
  EXPECT_FALSE(matcher.accept_token(256));
  EXPECT_THAT(matcher.rejection_reason(), HasSubstr("before the grammar is complete"));
  ASSERT_TRUE(matcher.accept_bytes("ab"));
  std::vector<uint32_t> mask(compiled->vocabulary().num_mask_words(), 0);
  matcher.fill_next_token_mask(mask);
  EXPECT_EQ(allowed_ids(mask, 257), std::vector<int32_t>{256});
  EXPECT_FALSE(matcher.can_continue());
  EXPECT_TRUE(matcher.accept_token(256));
  EXPECT_TRUE(matcher.is_terminated());
}

TEST(GrammarMatcher, Utf8SplitAcrossTokens) {
  Grammar grammar = parse_gbnf("root ::= \"ж\" [a-z]", "g.gbnf");
  auto compiled = std::make_shared<CompiledGrammar>(grammar, test::byte_vocabulary());
  GrammarMatcher matcher(compiled);
  std::vector<uint32_t> mask(compiled->vocabulary().num_mask_words(), 0);
  matcher.fill_next_token_mask(mask);
  EXPECT_EQ(allowed_ids(mask, 257), std::vector<int32_t>{0xD0});
  ASSERT_TRUE(matcher.accept_bytes("\xD0"));
  EXPECT_FALSE(matcher.is_complete());
  matcher.fill_next_token_mask(mask);
  EXPECT_EQ(allowed_ids(mask, 257), std::vector<int32_t>{0xB6});
  EXPECT_FALSE(matcher.accept_bytes("\xB7"));
  ASSERT_TRUE(matcher.accept_bytes("\xB6q"));
  EXPECT_TRUE(matcher.is_complete());
  // Invalid UTF-8 is never accepted.
  GrammarMatcher any(
      std::make_shared<CompiledGrammar>(parse_gbnf("root ::= .*", "g"), test::byte_vocabulary()));
  EXPECT_FALSE(any.accept_bytes("\xC0\x80"));
  EXPECT_FALSE(any.accept_bytes("\xED\xA0\x80"));
  EXPECT_TRUE(any.accept_bytes("\xF0\x9F\x98\x80"));
}

// The engine's mask timings stay bounded however many tokens a job or server samples.
TEST(GrammarConstraints, KeepsTheFirstMaskTimesOnly) {
  const auto tokenizer =
      load_tokenizer_file(test::shared_path("models/stories260K/llama2c/tok512.model"));
  GrammarConstraints constraints(*tokenizer);
  const auto grammar = std::make_shared<const Grammar>(json_object_grammar());
  auto matcher = constraints.make_matcher(grammar);
  std::vector<float> logits(static_cast<size_t>(tokenizer->vocab_size()), 0.0f);
  for (size_t i = 0; i < GrammarConstraints::kMaxRecordedMaskTimes + 10; ++i) {
    ASSERT_GT(constraints.mask_logits(*matcher, logits), 0u);
  }
  EXPECT_EQ(constraints.mask_times_us().size(), GrammarConstraints::kMaxRecordedMaskTimes);
}

// A grammar no request uses any more is forgotten, with its masks, when the next one comes (a
// server sees new grammars for as long as it runs).
TEST(GrammarConstraints, ForgetsGrammarsNothingHolds) {
  const auto tokenizer =
      load_tokenizer_file(test::shared_path("models/stories260K/llama2c/tok512.model"));
  GrammarConstraints constraints(*tokenizer);
  auto kept = std::make_shared<const Grammar>(json_object_grammar());
  auto kept_matcher = constraints.make_matcher(kept);
  {
    auto dropped = std::make_shared<const Grammar>(regex_grammar("[a-z]+", "re"));
    constraints.make_matcher(dropped);
  }
  EXPECT_EQ(constraints.num_compiled(), 2u);
  auto other = std::make_shared<const Grammar>(regex_grammar("[0-9]+", "re"));
  constraints.make_matcher(other);
  EXPECT_EQ(constraints.num_compiled(), 2u);  // kept (its matcher lives) and other
}

}  // namespace
}  // namespace sluice
