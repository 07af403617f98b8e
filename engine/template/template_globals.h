// The functions a template can call by name: transformers' raise_exception(message) and
// strftime_now(format), and Jinja2's range, namespace and dict. Render variables with the same
// name take precedence, as they do in Jinja2.
#pragma once

#include <string_view>

#include "engine/template/template_value.h"

namespace sluice::jinja {

// Returns the global function called name, or nullptr.
const Value* find_global(std::string_view name);

}  // namespace sluice::jinja
