// markupsafe.Markup as Jinja2 uses it with autoescaping off (transformers' setting): `|safe` and
// `|escape` return Markup, a str that is already HTML. Printing it, `~` and comparisons read its
// text as any str; what differs is combining it with plain strings, which escapes them
// (& < > " ' become &amp; &lt; &gt; &#34; &#39;): `Markup + str`, `str + Markup`, `Markup % args`,
// Markup.join and Markup.format, and the methods that return Markup again (upper, strip,
// replace, split ...). Templates meet it in tool prompts: `"<tools>"|safe + description`.
#pragma once

#include <string>
#include <string_view>

#include "engine/template/call_args.h"
#include "engine/template/template_value.h"

namespace sluice::jinja {

// Returns text with & < > " ' replaced by &amp; &lt; &gt; &#34; &#39;. Throws RenderFault when
// the result would be longer than kMaxStringBytes.
std::string html_escape(std::string_view text);

// markupsafe.escape(value) (the escape / e filters): markup as it is, anything else str(value)
// escaped, as markup.
Value escape_markup(const Value& value);

// Markup(value) (the safe filter): markup as it is, anything else str(value) unescaped.
Value mark_safe(const Value& value);

// Returns text as a string value that is markup when like is: what a str method or filter that
// markupsafe (or Jinja2's soft_str) keeps Markup returns.
Value keep_markup(const Value& like, std::string text);

// Returns a + b where a or b is markup and both are strings: the plain one escaped, the result
// markup.
Value add_markup(const Value& a, const Value& b);

// Calls the str method self.name(args) the way Markup does: join and format escape their
// arguments, replace escapes `new`, ljust / rjust / center their fill character; the methods
// markupsafe wraps return markup (split and its kin a list of markup); the rest (find,
// startswith, isdigit ...) return what str's do. Precondition: self is markup and
// is_string_method(name).
Value call_markup_method(const Value& self, std::string_view name, const CallArgs& args);

}  // namespace sluice::jinja
