// Python's operators on template values: arithmetic with int/float promotion and floor
// semantics, + and * on strings and lists (and markup's escaping +, * and %), ~ (string
// concatenation, never escaping: autoescaping is off), comparisons that raise
// Python's TypeError for unordered types, and `in`. An undefined operand raises where Jinja2's
// Undefined raises (arithmetic, ordering) and not where it does not (==, ~, in).
#pragma once

#include "engine/template/template_ast.h"
#include "engine/template/template_value.h"

namespace sluice::jinja {

// Returns a <op> b for the arithmetic operators and ~ (not `and` / `or`, which short-circuit).
Value binary_operation(BinaryOp op, const Value& a, const Value& b);

// Returns -a or +a.
Value unary_operation(UnaryOp op, const Value& a);

// Returns a <op> b.
bool compare_values(CompareOp op, const Value& a, const Value& b);

// Returns item in container.
bool contains(const Value& container, const Value& item);

// Three-way Python ordering (<0, 0, >0) for sorting; throws RenderFault for unordered types.
int order_values(const Value& a, const Value& b);

}  // namespace sluice::jinja
