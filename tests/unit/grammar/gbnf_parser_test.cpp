#include "engine/grammar/gbnf_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "tests/unit/grammar/grammar_test_support.h"

namespace sluice {
namespace {

using test::grammar_accepts;
using ::testing::HasSubstr;

std::string gbnf_error_of(const std::string& text) {
  return test::error_message([&] { parse_gbnf(text, "g.gbnf"); });
}

TEST(GbnfParser, LiteralsAlternativesAndRules) {
  Grammar g = parse_gbnf(
      "root ::= greeting \" \" name  # a comment\n"
      "greeting ::= \"hello\" | \"hi\"\n"
      "name ::= [A-Z] [a-z]*\n",
      "g.gbnf");
  EXPECT_TRUE(grammar_accepts(g, "hello World"));
  EXPECT_TRUE(grammar_accepts(g, "hi X"));
  EXPECT_FALSE(grammar_accepts(g, "hey World"));
  EXPECT_FALSE(grammar_accepts(g, "hello world"));
  EXPECT_FALSE(grammar_accepts(g, "hello"));
}

TEST(GbnfParser, QuantifiersAndGroups) {
  Grammar g = parse_gbnf("root ::= (\"ab\")+ \"c\"? [0-9]{2,3} \"x\"{2} \"y\"{1,}", "g.gbnf");
  EXPECT_TRUE(grammar_accepts(g, "ab12xxy"));
  EXPECT_TRUE(grammar_accepts(g, "ababc123xxyyy"));
  EXPECT_FALSE(grammar_accepts(g, "ab1xxy"));
  EXPECT_FALSE(grammar_accepts(g, "ab1234xxy"));
  EXPECT_FALSE(grammar_accepts(g, "ab12xy"));
  EXPECT_FALSE(grammar_accepts(g, "12xxy"));
  EXPECT_FALSE(grammar_accepts(g, "ab12xx"));
}

TEST(GbnfParser, EscapesNegationAndUnicode) {
  Grammar g = parse_gbnf("root ::= \"\\\"\" [^\"\\n]* \"\\\"\" \"\\x41\\u00e9\\U0001F600\" [а-я]",
                         "g.gbnf");
  EXPECT_TRUE(grammar_accepts(g, "\"héllo 😀\"Aé😀ж"));
  EXPECT_FALSE(grammar_accepts(g, "\"a\nb\"Aé😀ж"));
  EXPECT_FALSE(grammar_accepts(g, "\"a\"Aé😀z"));
  // A negated class matches multi-byte characters as one character.
  Grammar any = parse_gbnf("root ::= [^a] [^a]", "g.gbnf");
  EXPECT_TRUE(grammar_accepts(any, "жё"));
  EXPECT_FALSE(grammar_accepts(any, "жa"));
  EXPECT_FALSE(grammar_accepts(any, "ж"));
  Grammar dot = parse_gbnf("root ::= . .", "g.gbnf");
  EXPECT_TRUE(grammar_accepts(dot, "🎉x"));
}

TEST(GbnfParser, RulesContinueOverLines) {
  Grammar g = parse_gbnf("root ::= \"a\"\n  | \"b\"\n  \"c\"\nother ::= \"z\"", "g.gbnf");
  EXPECT_TRUE(grammar_accepts(g, "a"));
  EXPECT_TRUE(grammar_accepts(g, "bc"));
  EXPECT_FALSE(grammar_accepts(g, "z"));
}

TEST(GbnfParser, ErrorsNameLineAndColumn) {
  EXPECT_THAT(gbnf_error_of("root ::= \"a\"\nx ::= [b-a]"),
              HasSubstr("g.gbnf:2:8: character range is reversed"));
  EXPECT_THAT(gbnf_error_of("root ::= \"abc"),
              HasSubstr("g.gbnf:1:14: unterminated string literal"));
  EXPECT_THAT(gbnf_error_of("root ::= (\"a\" | \"b\"\n"), HasSubstr("g.gbnf:2:1: expected ')'"));
  EXPECT_THAT(gbnf_error_of("root = \"a\""),
              HasSubstr("g.gbnf:1:6: expected '::=' after rule name 'root'"));
  EXPECT_THAT(gbnf_error_of("root ::= \"\\q\""), HasSubstr("g.gbnf:1:13: unknown escape '\\q'"));
  EXPECT_THAT(gbnf_error_of("root ::= \"a\" @"),
              HasSubstr("g.gbnf:1:14: unexpected character '@'"));
  EXPECT_THAT(gbnf_error_of("root ::= \"a\"{3,2}"), HasSubstr("g.gbnf:1:13"));
  EXPECT_THAT(gbnf_error_of("root ::= \"a\"{99999}"),
              HasSubstr("g.gbnf:1:14: expected a repeat count"));
}

TEST(GbnfParser, ErrorsNameRules) {
  EXPECT_THAT(gbnf_error_of("root ::= thing"),
              HasSubstr("g.gbnf:1:10: rule 'root' refers to undefined rule 'thing'"));
  EXPECT_THAT(gbnf_error_of("start ::= \"a\""), HasSubstr("no rule named 'root'"));
  EXPECT_THAT(gbnf_error_of("root ::= \"a\"\nroot ::= \"b\""),
              HasSubstr("g.gbnf:2:1: rule 'root' is defined twice"));
  EXPECT_THAT(gbnf_error_of("root ::= expr\nexpr ::= expr \"+\" \"1\" | \"1\""),
              HasSubstr("rule 'expr' is left-recursive"));
  EXPECT_THAT(gbnf_error_of("root ::= [^\\x00-\\U0010FFFF]"), HasSubstr("matches nothing"));
}

TEST(GbnfParser, DeepGroupsAreRefused) {
  std::string text = "root ::= " + std::string(100, '(') + "\"a\"" + std::string(100, ')');
  EXPECT_THAT(gbnf_error_of(text), HasSubstr("groups nested deeper than 64"));
  std::string ok = "root ::= " + std::string(60, '(') + "\"a\"" + std::string(60, ')');
  EXPECT_TRUE(grammar_accepts(parse_gbnf(ok, "g.gbnf"), "a"));
}

TEST(GbnfParser, RecursiveGrammarNestingIsBounded) {
  Grammar g = parse_gbnf("root ::= \"[\" root? \"]\"", "g.gbnf");
  EXPECT_TRUE(grammar_accepts(g, "[[[]]]"));
  EXPECT_FALSE(grammar_accepts(g, "[[[]]"));
  auto compiled = std::make_shared<CompiledGrammar>(g, test::byte_vocabulary(), /*max_depth=*/50);
  GrammarMatcher matcher(compiled);
  EXPECT_FALSE(matcher.accept_bytes(std::string(200, '[')));
  EXPECT_THAT(matcher.rejection_reason(), HasSubstr("nesting deeper than 50 levels"));
  EXPECT_TRUE(matcher.accept_bytes(std::string(20, '[')));  // the state was left unchanged
}

}  // namespace
}  // namespace sluice
