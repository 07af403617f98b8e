// Parses the token stream into statements: text, {{ output }}, and the tags chat templates use
// (if/elif/else, for/else with an `if` filter, set and block set, macro, break/continue,
// filter blocks, with, print, and transformers' generation block).
#pragma once

#include <string_view>

#include "engine/template/template_ast.h"

namespace sluice::jinja {

// Parses normalized template source into a program. Throws sluice::Error with the line and
// column of the first syntax error.
TemplateProgram parse_template(std::string source);

}  // namespace sluice::jinja
