// Reads GBNF, llama.cpp's grammar format: `name ::= body` rules; bodies of "literals" (with
// \n \r \t \\ \" \xHH \uHHHH \UHHHHHHHH escapes), [character classes] (ranges, ^ negation, the
// same escapes), `.` (any character), rule names, ( groups ), alternatives with |, and the
// quantifiers * + ? {m} {m,} {m,n}; `#` starts a comment. A rule continues over line breaks
// until the next `name ::=`. The root rule is `root`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_expr.h"

namespace sluice {

// Groups nest at most this deep in a GBNF text (the parser recurses per group).
inline constexpr int kMaxGbnfNesting = 64;

// Returns the rules of text. Throws sluice::Error "<source_name>:<line>:<column>: <problem>" on a
// syntax error, invalid UTF-8 or groups nested past kMaxGbnfNesting.
std::vector<GrammarRuleDef> parse_gbnf_rules(std::string_view text, const std::string& source_name);

// Returns the grammar of text with root rule `root`; errors as parse_gbnf_rules and
// Grammar::from_rules.
Grammar parse_gbnf(std::string_view text, const std::string& source_name);

}  // namespace sluice
