// Length bounds on grammar expressions (length_bound.h): exact ranges, and bounded parts that
// hold only sentences of the expression with a length in the bounds.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/grammar.h"
#include "engine/grammar/length_bound.h"
#include "engine/grammar/regex_grammar.h"
#include "tests/unit/grammar/grammar_test_support.h"

namespace sluice {
namespace {

GrammarExpr regex_expr(const std::string& regex) {
  return regex_to_expr(regex, "r");
}

Grammar expr_grammar(const GrammarExpr& expr) {
  GrammarRuleDef root;
  root.name = "root";
  root.body = expr;
  return Grammar::from_rules({root}, "root", "bounded");
}

// Every string over alphabet up to max_len characters.
std::vector<std::string> all_strings(const std::string& alphabet, size_t max_len) {
  std::vector<std::string> out = {""};
  for (size_t begin = 0; begin < out.size(); ++begin) {
    if (out[begin].size() == max_len) continue;
    for (char c : alphabet) out.push_back(out[begin] + c);
  }
  return out;
}

TEST(LengthBound, RangesOfRegexes) {
  auto range = [](const std::string& regex) { return expr_length(regex_expr(regex)); };
  EXPECT_EQ(range("abc").lo, 3U);
  EXPECT_EQ(range("abc").hi, 3U);
  EXPECT_EQ(range("a|bcd").lo, 1U);
  EXPECT_EQ(range("a|bcd").hi, 3U);
  EXPECT_EQ(range("[a-z]{2,5}x?").lo, 2U);
  EXPECT_EQ(range("[a-z]{2,5}x?").hi, 6U);
  EXPECT_EQ(range("a+").hi, kUnboundedLength);
  EXPECT_EQ(range("(ab)*c").lo, 1U);
  EXPECT_EQ(range("").hi, 0U);
}

// For each regex and bounds: the bounded expression accepts only strings the regex accepts with
// a length in the bounds, and at least one string (checked over every short string).
TEST(LengthBound, BoundedPartsAreSoundAndNotEmpty) {
  struct Case {
    const char* regex;
    uint64_t lo;
    std::optional<uint64_t> hi;
  };
  const Case cases[] = {
      {"[ab]+", 2, 4},           {"a[ab]*b", 3, 3},   {"(ab)+", 3, 5},
      {"a|bb|aaa", 2, 2},        {"(a|bb)+", 5, 5},   {"[ab]{0,3}b?", 1, 2},
      {"a*b*", 4, std::nullopt}, {"(a|b)?ab*", 0, 2}, {"(ab|a)(b|ba)*", 4, 6},
      {"b(a{2,3})*", 6, 7},      {"a?b?a?b?", 3, 3},  {"(a[ab]?b?)+", 5, 9},
      {"(a|bba)*b", 4, 8},       {"(ab?)?b", 3, 3},   {"(a[ab]{0,4}){2,}", 7, 9},
  };
  const std::vector<std::string> strings = all_strings("ab", 9);
  for (const Case& c : cases) {
    auto bounded = bound_length(regex_expr(c.regex), c.lo, c.hi);
    ASSERT_TRUE(bounded) << c.regex;
    const Grammar full = regex_grammar(c.regex, "r");
    const Grammar part = expr_grammar(*bounded);
    size_t num_accepted = 0;
    for (const std::string& s : strings) {
      if (!test::grammar_accepts(part, s)) continue;
      ++num_accepted;
      EXPECT_TRUE(test::grammar_accepts(full, s)) << c.regex << " wrote " << s;
      EXPECT_GE(s.size(), c.lo) << c.regex << " wrote " << s;
      EXPECT_LE(s.size(), c.hi.value_or(s.size())) << c.regex << " wrote " << s;
    }
    EXPECT_GT(num_accepted, 0U) << c.regex;
  }
}

TEST(LengthBound, NoneWhenNoLengthFits) {
  EXPECT_FALSE(bound_length(regex_expr("abc"), 4, 10));
  EXPECT_FALSE(bound_length(regex_expr("abc"), 0, 2));
  EXPECT_FALSE(bound_length(regex_expr("(ab)+"), 3, 3));
  EXPECT_TRUE(bound_length(regex_expr("(ab)+"), 3, 4));
}

TEST(LengthBound, InlinedRulesBoundFormats) {
  std::map<std::string, GrammarExpr> rules;
  for (GrammarRuleDef& rule : parse_gbnf_rules("word ::= [a-z]{1,8}\ndot ::= \".\"", "g"))
    rules[rule.name] = std::move(rule.body);
  auto root = parse_gbnf_rules("root ::= word ( dot word )*", "g").at(0).body;
  auto inlined = inline_rules(root, rules);
  ASSERT_TRUE(inlined);
  EXPECT_EQ(expr_length(*inlined).lo, 1U);
  auto bounded = bound_length(*inlined, 0, 12);
  ASSERT_TRUE(bounded);
  EXPECT_LE(expr_length(*bounded).hi, 12U);
  EXPECT_FALSE(inline_rules(parse_gbnf_rules("root ::= missing", "g").at(0).body, rules));
  std::map<std::string, GrammarExpr> recursive;
  recursive["r"] = parse_gbnf_rules("r ::= \"(\" r \")\" | \"x\"", "g").at(0).body;
  EXPECT_FALSE(inline_rules(recursive["r"], recursive));
}

}  // namespace
}  // namespace sluice
