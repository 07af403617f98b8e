// Jinja2's built-in filters that chat templates use, plus transformers' tojson (json.dumps with
// ensure_ascii=False and Python's separators). Each behaves as Jinja2 3.1 does under the
// immutable sandbox; where Jinja2 returns a generator (map, select, unique, ...) these return a
// list, which loops, join, length and tojson treat the same way.
#pragma once

#include <string_view>

#include "engine/template/template_ast.h"

namespace sluice::jinja {

// Returns the filter called name, or nullptr when there is none.
FilterFn find_filter(std::string_view name);

// Returns fn(input, args), charging the render budget for the input, the arguments and the
// result.
Value run_filter(RenderState& state, FilterFn fn, const Value& input, const CallArgs& args);

// Applies the filter called name (used by map('name')); throws RenderFault when unknown.
Value apply_filter(RenderState& state, std::string_view name, const Value& input,
                   const CallArgs& args);

}  // namespace sluice::jinja
