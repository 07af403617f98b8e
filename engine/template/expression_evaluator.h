// Evaluates expressions against the render state: names resolve through the scopes, then the
// render variables, then the globals; `and` / `or` short-circuit and return an operand, as in
// Python. Before each operation that can fail it records the node's position in the state, so
// a RenderFault can be reported at the right line and column.
#pragma once

#include "engine/template/call_args.h"
#include "engine/template/render_state.h"
#include "engine/template/template_ast.h"

namespace sluice::jinja {

// Returns the value of expr.
Value evaluate(RenderState& state, const Expr& expr);

// Evaluates the arguments of a call, filter or test.
CallArgs evaluate_args(RenderState& state, const ArgExprs& args);

// Returns filter(input, args); throws RenderFault for a filter that does not exist.
Value apply_filter_call(RenderState& state, const FilterCall& filter, const Value& input);

// Calls callee(args); throws RenderFault when it is not callable (or undefined).
Value call_value(RenderState& state, const Value& callee, const CallArgs& args);

}  // namespace sluice::jinja
