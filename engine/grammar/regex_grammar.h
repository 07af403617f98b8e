// Regular expressions as grammars: the subset people use for structured output — literals,
// escapes (\n \t \r \f \v \0 \xHH \uHHHH, escaped punctuation), classes with ranges and
// negation, \d \w \s \D \W \S, `.` (any character but a newline), groups ( ), (?: ), named
// groups, alternation, and the quantifiers * + ? {m} {m,} {m,n} (lazy and possessive forms match
// the same strings). The whole text must match: a leading ^ and a trailing $ are accepted and
// implied anyway. Backreferences, lookaround, word boundaries, inline flags and Unicode property
// classes are refused with an error naming them.
#pragma once

#include <string>
#include <string_view>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_expr.h"

namespace sluice {

// Groups nest at most this deep in a regular expression (the parser recurses per group).
inline constexpr int kMaxRegexNesting = 64;

// How the matched text is written out.
enum class RegexTextMode : uint8_t {
  Raw,         // the text itself
  JsonString,  // the inside of a JSON string: ", \ and control characters appear escaped
};

// Returns the expression matching exactly the strings of regex. Throws sluice::Error
// "<source_name>: regular expression, column C: <problem>" (C counts bytes from 1).
GrammarExpr regex_to_expr(std::string_view regex, const std::string& source_name,
                          RegexTextMode mode = RegexTextMode::Raw);

// Returns raw (an expression over characters, as RegexTextMode::Raw writes them) as the inside
// of a JSON string: each character class spelled as RegexTextMode::JsonString spells it.
GrammarExpr json_string_expr(const GrammarExpr& raw);

// Returns the grammar whose sentences are the matches of regex (errors as regex_to_expr).
Grammar regex_grammar(std::string_view regex, const std::string& source_name);

}  // namespace sluice
