// Length bounds on a grammar expression: how many characters its sentences have, and a part of
// its language whose sentences all have a length within given bounds. This is how a JSON Schema
// string keeps a pattern or a format beside minLength / maxLength: the grammar writes a sentence
// of the pattern whose length the schema allows (a narrowing when some valid lengths are left
// out, never a widening).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "engine/grammar/grammar_expr.h"

namespace sluice {

inline constexpr uint64_t kUnboundedLength = UINT64_MAX;

// The shortest and longest sentence of an expression, in characters (code points).
struct LengthRange {
  uint64_t lo = 0;
  uint64_t hi = 0;  // kUnboundedLength when sentences may be as long as they like
};

// Returns the length range of expr. Rule references are unbounded (they may recurse).
LengthRange expr_length(const GrammarExpr& expr);

// Returns expr with every rule reference replaced by its rule's body from rules, recursively;
// nullopt when a reference names no rule in rules, recursion runs deeper than max_depth, or the
// result grows past max_exprs expressions.
std::optional<GrammarExpr> inline_rules(const GrammarExpr& expr,
                                        const std::map<std::string, GrammarExpr>& rules,
                                        int max_depth = 16, size_t max_exprs = 20000);

// Returns an expression whose sentences are sentences of expr with a length in [lo, hi] (hi
// nullopt: no upper bound), or nullopt when it finds none. Every sentence it keeps is one of
// expr's; some of expr's sentences of a fitting length may be left out (a repeat of a part of
// varying length keeps that part at one length; a sequence shares the bounds among its parts in
// order). Repeat counts stay within kMaxGrammarRepeat.
std::optional<GrammarExpr> bound_length(const GrammarExpr& expr, uint64_t lo,
                                        std::optional<uint64_t> hi);

}  // namespace sluice
