// Jinja2's tests (`x is defined`, `x is none`, `x is equalto y`, ...), with Python's type
// rules: a bool is a number, strings and dicts are iterable sequences, and an undefined value
// is iterable (it iterates as empty), as Jinja2's Undefined is.
#pragma once

#include <string_view>

#include "engine/template/template_ast.h"

namespace sluice::jinja {

// Returns the test called name, or nullptr when there is none.
TestFn find_test(std::string_view name);

// Returns fn(input, args), charging the render budget for the input and the arguments.
bool run_test(RenderState& state, TestFn fn, const Value& input, const CallArgs& args);

// Runs the test called name (used by select / reject); throws RenderFault when unknown.
bool apply_test(RenderState& state, std::string_view name, const Value& input,
                const CallArgs& args);

}  // namespace sluice::jinja
