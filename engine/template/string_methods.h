// The str methods templates call (content.strip(), text.split('\n'), role.startswith('a'),
// '{}'.format(x), ...), with Python's semantics and argument names.
#pragma once

#include <string>
#include <string_view>

#include "engine/template/call_args.h"
#include "engine/template/template_value.h"

namespace sluice::jinja {

// Returns true when name is a str method this interpreter implements.
bool is_string_method(std::string_view name);

// Calls self.name(args). Precondition: is_string_method(name). Throws RenderFault on bad
// arguments, as Python's TypeError / ValueError would.
Value call_string_method(const std::string& self, std::string_view name, const CallArgs& args);

}  // namespace sluice::jinja
