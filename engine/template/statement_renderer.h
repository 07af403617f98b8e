// Runs statements: writes text and {{ }} output to the state's current output, and carries
// out if, for (with loop variables, an `if` filter, else, break and continue), set, block set,
// namespace attribute assignment, macros, filter blocks and scoped blocks.
#pragma once

#include "engine/template/render_state.h"
#include "engine/template/template_ast.h"

namespace sluice::jinja {

// How a body finished: normally, or at a {% break %} / {% continue %} for the enclosing loop.
enum class Flow : uint8_t { Normal, Break, Continue };

// Renders body into *state.out. Throws RenderFault (with state.offset at the failing
// construct) or TemplateError from raise_exception.
Flow render_body(RenderState& state, const Body& body);

}  // namespace sluice::jinja
