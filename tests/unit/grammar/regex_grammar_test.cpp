#include "engine/grammar/regex_grammar.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "tests/unit/grammar/grammar_test_support.h"

namespace sluice {
namespace {

using test::grammar_accepts;
using ::testing::HasSubstr;

bool regex_accepts(const std::string& regex, const std::string& text) {
  return grammar_accepts(regex_grammar(regex, "--regex"), text);
}

std::string regex_error_of(const std::string& regex) {
  return test::error_message([&] { regex_grammar(regex, "--regex"); });
}

TEST(RegexGrammar, LiteralsClassesAndQuantifiers) {
  EXPECT_TRUE(regex_accepts("^\\d{3}-\\d{4}$", "555-1234"));
  EXPECT_FALSE(regex_accepts("^\\d{3}-\\d{4}$", "555-123"));
  EXPECT_FALSE(regex_accepts("\\d{3}", "12a"));
  EXPECT_TRUE(regex_accepts("[A-Z][a-z]+( [A-Z][a-z]+)*", "Ada Lovelace"));
  EXPECT_FALSE(regex_accepts("[A-Z][a-z]+( [A-Z][a-z]+)*", "Ada lovelace"));
  EXPECT_TRUE(regex_accepts("(cat|dog)s?", "dogs"));
  EXPECT_FALSE(regex_accepts("(cat|dog)s?", "cow"));
  EXPECT_TRUE(regex_accepts("a{2,}b{0,1}", "aaaab"));
  EXPECT_FALSE(regex_accepts("a{2,}", "a"));
  EXPECT_TRUE(regex_accepts("\\w+@\\w+\\.com", "a_1@b.com"));
  EXPECT_TRUE(regex_accepts("[^\\s]+", "x-y"));
  EXPECT_FALSE(regex_accepts("[^\\s]+", "x y"));
  EXPECT_TRUE(regex_accepts("a.c", "aжc"));
  EXPECT_FALSE(regex_accepts("a.c", "a\nc"));
  EXPECT_TRUE(regex_accepts("(?:ab)+?(?P<x>c)(?<y>d)", "ababcd"));
  EXPECT_TRUE(regex_accepts("[]a]+", "]a]"));
  EXPECT_TRUE(regex_accepts("a{,2}", "a{,2}"));  // not a quantifier: literal text
  EXPECT_TRUE(regex_accepts("\\x41\\u00e9\\.\\*", "Aé.*"));
}

TEST(RegexGrammar, Unicode) {
  EXPECT_TRUE(regex_accepts("[а-яё]+ 😀", "привет 😀"));
  EXPECT_FALSE(regex_accepts("[а-яё]+ 😀", "hello 😀"));
  EXPECT_TRUE(regex_accepts("[^a-z]{2}", "ЖЯ"));
}

TEST(RegexGrammar, RefusesWhatItCannotDoNamingIt) {
  EXPECT_THAT(regex_error_of("(a)\\1"),
              HasSubstr("column 4: backreference '\\1' is not supported"));
  EXPECT_THAT(regex_error_of("a(?=b)"), HasSubstr("lookahead '(?=' is not supported"));
  EXPECT_THAT(regex_error_of("a(?!b)"), HasSubstr("lookahead '(?!' is not supported"));
  EXPECT_THAT(regex_error_of("(?<=a)b"), HasSubstr("lookbehind '(?<=' is not supported"));
  EXPECT_THAT(regex_error_of("\\bword"), HasSubstr("word boundary '\\b' is not supported"));
  EXPECT_THAT(regex_error_of("(?i)abc"), HasSubstr("inline flags"));
  EXPECT_THAT(regex_error_of("\\p{L}"), HasSubstr("Unicode property class '\\p'"));
  EXPECT_THAT(regex_error_of("a^b"), HasSubstr("column 2: anchor '^'"));
  EXPECT_THAT(regex_error_of("a$b"), HasSubstr("column 2: anchor '$'"));
  EXPECT_THAT(regex_error_of("x(^a|b)"), HasSubstr("column 3: anchor '^'"));
  EXPECT_THAT(regex_error_of("(a$)+"), HasSubstr("anchor '$'"));
  EXPECT_THAT(regex_error_of("(^a)*"), HasSubstr("anchor '^'"));
  EXPECT_THAT(regex_error_of("*a"), HasSubstr("column 1: nothing to repeat"));
  // A quantifier of a quantifier (found by the grammar_source fuzzer: ".++++..." made the cached
  // token masks and the walked ones disagree); the lazy and possessive suffixes stay accepted.
  EXPECT_THAT(regex_error_of(".+++"), HasSubstr("column 4: nothing to repeat before '+'"));
  EXPECT_THAT(regex_error_of("a{2}*"), HasSubstr("nothing to repeat before '*'"));
  EXPECT_THAT(regex_error_of("a*{3}"), HasSubstr("nothing to repeat before '{'"));
  EXPECT_TRUE(regex_accepts("a+?b*+c??", "aabc"));
  EXPECT_TRUE(regex_accepts("(a+)+", "aaa"));
  EXPECT_TRUE(regex_accepts("a*{x", "aa{x"));  // '{' starting no count stays literal
  EXPECT_THAT(regex_error_of("(ab"), HasSubstr("missing ')'"));
  EXPECT_THAT(regex_error_of("[ab"), HasSubstr("missing ']'"));
  EXPECT_THAT(regex_error_of("[z-a]"), HasSubstr("reversed"));
  EXPECT_THAT(regex_error_of("a{5,2}"), HasSubstr("reversed"));
  EXPECT_THAT(regex_error_of(std::string(80, '(') + std::string(80, ')')),
              HasSubstr("nested deeper"));
}

TEST(RegexGrammar, AnchorsWhereTheyAlwaysHoldAreDropped) {
  EXPECT_TRUE(regex_accepts("^ab$|^cd$", "ab"));
  EXPECT_TRUE(regex_accepts("^ab$|^cd$", "cd"));
  EXPECT_FALSE(regex_accepts("^ab$|^cd$", "abcd"));
  EXPECT_TRUE(regex_accepts("(^a|b$)", "a"));
  EXPECT_TRUE(regex_accepts("(^a|^b)c(d$|e)$", "acd"));
  EXPECT_TRUE(regex_accepts("(?:^x)?y", "xy"));
  EXPECT_TRUE(regex_accepts("(?:^x)?y", "y"));
}

TEST(RegexGrammar, RepeatsOfPartsThatCanBeEmpty) {
  // Each of these used to lower to a rule that refers to itself before matching a character.
  EXPECT_TRUE(regex_accepts("(a*)+", ""));
  EXPECT_TRUE(regex_accepts("(a*)+", "aaa"));
  EXPECT_FALSE(regex_accepts("(a*)+", "ab"));
  const std::string list = "^,?(((AB|CD),?)*)+$";
  EXPECT_TRUE(regex_accepts(list, ",AB,CD"));
  EXPECT_TRUE(regex_accepts(list, "ABCD,"));
  EXPECT_TRUE(regex_accepts(list, ""));
  EXPECT_FALSE(regex_accepts(list, ",,AB"));
  EXPECT_TRUE(regex_accepts("(x?y?){2,}z", "xyxz"));
  EXPECT_TRUE(regex_accepts("(x?y?){2,}z", "z"));
  EXPECT_FALSE(regex_accepts("(x?y?){2,}z", "xzz"));
  EXPECT_TRUE(regex_accepts("(()|a)*b", "aab"));
}

TEST(RegexGrammar, JsonStringModeEscapes) {
  GrammarRuleDef root{"root", regex_to_expr("a[\"x]\\n", "p", RegexTextMode::JsonString), 0, 0};
  Grammar g = Grammar::from_rules({root}, "root", "p");
  EXPECT_TRUE(test::grammar_accepts(g, "a\\\"\\n"));
  EXPECT_TRUE(test::grammar_accepts(g, "ax\\n"));
  EXPECT_FALSE(test::grammar_accepts(g, "a\"\n"));
}

}  // namespace
}  // namespace sluice
