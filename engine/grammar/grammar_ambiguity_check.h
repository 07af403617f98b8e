// The compile-time half of the ambiguity budget (grammar_budget.h). The closure of every rule —
// the stacks its parse can be in before it reads a character — is expanded once; then the
// grammar is read along the text most of its parses agree on, for ambiguity that grows with the
// input. A grammar that does not fit the matcher's bounds is refused while it is compiled, not
// when a request's first bytes would need it.
#pragma once

#include <string>

#include "engine/grammar/grammar.h"

namespace sluice {

// Throws sluice::Error naming source_name, the rule or the text, and the limit: when the closure
// of a rule holds more than kMaxGrammarStacks stacks or takes more than kMaxClosureSteps steps,
// when the closures take more than kMaxProbeSteps in all, or when a step of the walk passes the
// matcher's bounds.
void check_grammar_ambiguity(const Grammar& grammar, const std::string& source_name);

}  // namespace sluice
