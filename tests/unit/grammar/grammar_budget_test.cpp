// The grammar budget (grammar_budget.h): hostile sources are refused while they compile, within
// a small memory allowance, naming the limit; legitimate large or nested grammars still compile;
// a matcher's work and memory stay bounded over long and ambiguous inputs.
#include "engine/grammar/grammar_budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/grammar/grammar_source.h"
#include "tests/support/memory_limit.h"
#include "tests/unit/grammar/grammar_test_support.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

GrammarSource gbnf_source(std::string text) {
  return GrammarSource{GrammarSourceKind::Gbnf, "structured_outputs.grammar", std::move(text), {}};
}

GrammarSource regex_source(std::string text) {
  return GrammarSource{GrammarSourceKind::Regex, "--regex", std::move(text), {}};
}

GrammarSource schema_source(const nlohmann::json& schema) {
  return GrammarSource{GrammarSourceKind::JsonSchema, "schema.json", schema.dump(), {}};
}

// The issue's 60-byte grammar: 100^4 parses of the empty prefix. Before the budget it grew a
// server past 660 MB and ended it with std::bad_alloc.
TEST(GrammarBudget, NestedRepeatsOfNothingAreRefusedWhileCompiling) {
  expect_error_within_memory_limit(
      [] { build_grammar(gbnf_source(R"(root ::= ((("a"{0,100}){0,100}){0,100}){0,100})")); },
      {"structured_outputs.grammar", "rule 'root'", "too ambiguous", "4096"});
  expect_error_within_memory_limit(
      [] { build_grammar(regex_source("((a{0,1000}){0,1000}){0,1000}")); },
      {"--regex", "too ambiguous", "4096"});
  // Through rule references, the same product.
  expect_error_within_memory_limit(
      [] {
        build_grammar(
            gbnf_source("root ::= a{0,20}\na ::= b{0,20}\nb ::= c{0,20}\nc ::= \"x\"{0,20}\n"));
      },
      {"structured_outputs.grammar", "rule 'root'", "too ambiguous"});
}

TEST(GrammarBudget, AGrammarTooLargeWrittenOutIsRefusedNamingTheLimit) {
  std::string text = "root ::=";
  for (int i = 0; i < 40; ++i) text += " [a-z]{0,10000} \",\"";
    // Refused within the default 64 MB in a release build; the sanitizers' redzones and shadow
    // take that grammar's symbols past it, so their build allows 256 MB (written out in full, a
    // grammar past the limit takes as much as its text asks for).
#if defined(__SANITIZE_ADDRESS__)
  constexpr size_t kAllowance = size_t{256} << 20;
#else
  constexpr size_t kAllowance = size_t{64} << 20;
#endif
  expect_error_within_memory_limit([&] { build_grammar(gbnf_source(text)); },
                                   {"structured_outputs.grammar", "1048576 symbols", "'root'"},
                                   kAllowance);
}

// A long text is refused while it is parsed, before its expressions take the memory (200,000
// choices took 700 MB on their way to the lowering's limit).
TEST(GrammarBudget, ATextThatParsesIntoTooManyExpressionsIsRefusedWhileParsing) {
  std::vector<std::string> choices;
  for (int i = 0; i < 200000; ++i) choices.push_back("choice number " + std::to_string(i));
  expect_error_within_memory_limit(
      [&] {
        build_grammar(GrammarSource{GrammarSourceKind::Choice, "--choice", "", choices});
      },
      {"--choice", "more than 262144"}, size_t{256} << 20);
  expect_error_within_memory_limit([] { build_grammar(regex_source(std::string(2000000, 'a'))); },
                                   {"--regex", "more than 262144"}, size_t{256} << 20);
  nlohmann::json many_patterns = {{"type", "object"}, {"properties", nlohmann::json::object()}};
  for (int i = 0; i < 40; ++i)
    many_patterns["properties"]["p" + std::to_string(i)] = {{"pattern", std::string(10000, '.')}};
  expect_error_within_memory_limit([&] { build_grammar(schema_source(many_patterns)); },
                                   {"schema.json", "/pattern", "more than 262144"},
                                   size_t{256} << 20);
}

// Nesting alone is not ambiguity: each item here starts with a character the repeat around it
// cannot continue with, so the parse stays one stack deep however large the product of counts.
TEST(GrammarBudget, NestedBoundedStructuresThatAreNotAmbiguousCompile) {
  const nlohmann::json schema = {{"type", "array"},
                                 {"maxItems", 100},
                                 {"items",
                                  {{"type", "array"},
                                   {"maxItems", 100},
                                   {"items", {{"type", "string"}, {"maxLength", 100}}}}}};
  const Grammar grammar = build_grammar(schema_source(schema));
  EXPECT_TRUE(grammar_accepts(grammar, R"( [["ab", "c"], [], ["defg"]])"));
  EXPECT_FALSE(grammar_accepts(grammar, R"( [["ab", 1]])"));
  const Grammar regex = build_grammar(regex_source("(x[a-c]{0,1000}y){0,1000}"));
  EXPECT_TRUE(grammar_accepts(regex,
                              "xaby"
                              "xy"
                              "xcccy"));
}

// A choice among many strings parses as a trie: one stack per distinct next character, not one
// per string (10,000 strings were accepted and then every row failed on the first token).
TEST(GrammarBudget, AnEnumOfTenThousandStringsWorks) {
  nlohmann::json values = nlohmann::json::array();
  for (int i = 0; i < 10000; ++i) values.push_back("item-" + std::to_string(i * 7919 % 100000));
  const Grammar grammar = build_grammar(schema_source({{"enum", values}}));
  EXPECT_TRUE(grammar_accepts(grammar, R"( "item-0")"));
  EXPECT_TRUE(grammar_accepts(grammar, " \"item-" + std::to_string(9999 * 7919 % 100000) + "\""));
  EXPECT_FALSE(grammar_accepts(grammar, R"( "item-1")"));  // 7919 * k % 100000 is never 1 here
  EXPECT_FALSE(grammar_accepts(grammar, R"( "item-")"));

  std::vector<std::string> choices;
  for (int i = 0; i < 20000; ++i) choices.push_back("label " + std::to_string(i));
  const Grammar choice =
      build_grammar(GrammarSource{GrammarSourceKind::Choice, "--choice", "", choices});
  EXPECT_TRUE(grammar_accepts(choice, "label 19999"));
  EXPECT_TRUE(grammar_accepts(choice, "label 1"));
  EXPECT_FALSE(grammar_accepts(choice, "label 20000"));
  // Step it token by token: every step holds a few stacks and the masks stay exact.
  auto compiled = std::make_shared<const CompiledGrammar>(choice, byte_vocabulary());
  GrammarMatcher matcher(compiled);
  std::vector<uint32_t> mask(compiled->vocabulary().num_mask_words());
  for (const char c : std::string("label 1234")) {
    matcher.fill_next_token_mask(mask);
    ASSERT_TRUE(test_token_bit(std::span<const uint32_t>(mask), static_cast<uint8_t>(c))) << c;
    ASSERT_TRUE(matcher.accept_token(static_cast<uint8_t>(c))) << matcher.rejection_reason();
  }
  EXPECT_TRUE(matcher.is_complete());
}

// Ambiguity that grows with the input — one parse per split of the a's read so far — shows in
// no closure; compiling reads the grammar along the text most parses agree on and refuses it
// with that text as the witness.
TEST(GrammarBudget, AmbiguityThatGrowsWithTheInputIsFoundByReadingIt) {
  expect_error_within_memory_limit(
      [] { build_grammar(gbnf_source(R"(root ::= ("a"{1,100}){1,100} "b")")); },
      {"structured_outputs.grammar", "too ambiguous", "bytes \"aaaa", "4096"});
  expect_error_within_memory_limit(
      [] { build_grammar(gbnf_source("root ::= inner{0,300}\ninner ::= \"a\"{0,300}\n")); },
      {"too ambiguous", "4096"});
}

// Where the reading takes another path ("0" is read first here), a request that meets the
// ambiguity ends its match with the reason once a step would hold more than kMaxGrammarStacks
// parses, without a stall or a growing heap.
TEST(GrammarBudget, AmbiguityTheCompileMissesEndsTheMatchWithItsReason) {
  expect_error_within_memory_limit(
      [] {
        const Grammar grammar =
            build_grammar(gbnf_source(R"(root ::= ("a"{1,100}){1,100} "b" | "0")"));
        GrammarMatcher matcher(std::make_shared<const CompiledGrammar>(grammar, byte_vocabulary()));
        for (int i = 0; i < 10000; ++i) {
          if (!matcher.accept_bytes("a")) fail(matcher.rejection_reason());
        }
      },
      {"too ambiguous", "4096"});
}

// A long output keeps the matcher's memory at what its live stacks need: nested brackets in an
// ever new order make new stack nodes at every level, and the dead ones are dropped.
TEST(GrammarBudget, AMatcherOverALongOutputKeepsItsArenaSmall) {
  const Grammar grammar = build_grammar(gbnf_source(R"gbnf(root ::= item*
item ::= "(" item* ")" | "[" item* "]" | [a-z]
)gbnf"));
  GrammarMatcher matcher(std::make_shared<const CompiledGrammar>(grammar, byte_vocabulary()));
  size_t max_nodes = 0;
  std::string open;  // the brackets open, innermost last
  uint32_t random = 12345;
  for (int i = 0; i < 1000000; ++i) {
    random = random * 1103515245u + 12345u;
    const uint32_t pick = (random >> 16) % 3;
    std::string next = "x";
    if (pick == 0 && open.size() < 30) {
      next = (random >> 20) % 2 ? "(" : "[";
      open += next;
    } else if (pick == 1 && !open.empty()) {
      next = open.back() == '(' ? ")" : "]";
      open.pop_back();
    }
    ASSERT_TRUE(matcher.accept_bytes(next)) << matcher.rejection_reason();
    max_nodes = std::max(max_nodes, matcher.num_arena_nodes());
  }
  EXPECT_LT(max_nodes, size_t{1} << 16) << max_nodes;  // without compaction: 550,000
}

// The masks a grammar caches stay within their budget, and a spent budget costs speed only.
TEST(GrammarBudget, CachedMasksStayWithinTheirBudgetAndStayExact) {
  const Grammar grammar = build_grammar(schema_source(
      {{"type", "object"},
       {"properties", {{"name", {{"type", "string"}}}, {"tags", {{"type", "array"}}}}}}));
  const std::string text = R"( {"name": "x\"y", "tags": [1, {"a": null}, "z"]})";
  for (const size_t budget_bytes : {size_t{0}, size_t{2000}, size_t{1} << 30}) {
    auto budget = std::make_shared<MaskCacheBudget>(budget_bytes);
    auto compiled = std::make_shared<const CompiledGrammar>(grammar, byte_vocabulary(),
                                                            kDefaultMaxGrammarDepth, budget);
    GrammarMatcher matcher(compiled);
    std::vector<uint32_t> cached(compiled->vocabulary().num_mask_words());
    std::vector<uint32_t> walked(cached.size());
    for (const char c : text) {
      matcher.fill_next_token_mask(cached);
      matcher.fill_next_token_mask_by_walk(walked);
      ASSERT_EQ(cached, walked) << "budget " << budget_bytes;
      ASSERT_LE(budget->used_bytes(), budget_bytes);
      ASSERT_TRUE(matcher.accept_bytes(std::string(1, c))) << matcher.rejection_reason();
    }
    EXPECT_TRUE(matcher.is_complete());
    EXPECT_EQ(budget->used_bytes(), compiled->cached_mask_bytes());
    if (budget_bytes == 0) {
      EXPECT_EQ(compiled->cached_mask_bytes(), 0u);
    } else if (budget_bytes > 2000) {
      EXPECT_GT(compiled->cached_mask_bytes(), 2000u);
    }
  }
}

}  // namespace
}  // namespace sluice::test
