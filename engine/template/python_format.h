// Python's two string formatting mini-languages as templates use them: `"%s: %d" % (a, b)`
// (and the format filter, which is the same thing) and `"{}: {name}".format(a, name=b)`.
// Conversions s r d i f e g x o c and %; flags, width and precision; str.format's fill, align,
// sign, zero padding, width, precision and types s d f e g x o b %.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/template/call_args.h"
#include "engine/template/template_value.h"

namespace sluice::jinja {

// How the formatted fields are written: as they are (str), or HTML-escaped unless the value is
// markup, as markupsafe.Markup's % and format() write them (% escapes the text before padding
// it, format() after).
enum class FieldEscaping : uint8_t { None, Html };

// Returns format % args: args is a tuple of values, a dict for %(name)s, or a single value.
// Throws RenderFault as Python's TypeError would.
std::string python_percent_format(std::string_view format, const Value& args,
                                  FieldEscaping escaping = FieldEscaping::None);

// Returns format.format(*positional, **keyword). Throws RenderFault for a bad field.
std::string python_str_format(std::string_view format, const CallArgs& args,
                              FieldEscaping escaping = FieldEscaping::None);

}  // namespace sluice::jinja
