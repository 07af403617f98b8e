// A choice among fixed strings as a grammar (vLLM's `choice`, the CLI's --choice).
#pragma once

#include <string>
#include <vector>

#include "engine/grammar/grammar.h"

namespace sluice {

// Returns the grammar accepting exactly one of choices, each written as itself. Throws
// sluice::Error naming source_name when choices is empty or a choice is empty or not UTF-8.
Grammar choice_grammar(const std::vector<std::string>& choices, const std::string& source_name);

// Returns text as a GBNF string literal ("..." with \", \\ and control characters escaped).
std::string gbnf_literal(std::string_view text);

}  // namespace sluice
