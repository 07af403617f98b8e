// The empty string in a grammar expression: whether an expression matches it, and the same
// expression without it. A repeat without bound of a part that can match nothing ("(a*)+",
// "(x?,?)*") would lower to a rule that refers to itself before matching any character; written
// as a repeat of the part's non-empty sentences it matches the same strings and is not.
#pragma once

#include <optional>

#include "engine/grammar/grammar_expr.h"

namespace sluice {

// Whether expr matches the empty string. A rule reference counts as not (its rule is checked
// for left recursion when the grammar is built).
bool is_nullable(const GrammarExpr& expr);

// Returns an expression matching exactly expr's non-empty sentences, or nullopt when expr
// matches only the empty string. Rule references are kept as they are.
std::optional<GrammarExpr> non_empty_part(const GrammarExpr& expr);

}  // namespace sluice
