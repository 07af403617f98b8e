#include "engine/template/markup.h"

#include <algorithm>
#include <array>

#include "engine/template/python_format.h"
#include "engine/template/string_methods.h"

namespace sluice::jinja {

namespace {

// The str methods markupsafe overrides to return Markup (and list-returning split and its kin).
constexpr std::array<std::string_view, 15> kMarkupResultMethods{
    "capitalize", "title", "lower", "upper",  "casefold",     "strip",        "lstrip", "rstrip",
    "zfill",      "ljust", "rjust", "center", "removeprefix", "removesuffix", "replace"};
constexpr std::array<std::string_view, 3> kMarkupListMethods{"split", "rsplit", "splitlines"};

template <size_t N>
bool contains_name(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Escapes the string argument given at position index or by keyword name, as markupsafe
// escapes replace's `new` and the justifying methods' fill character. A non-string is left for
// the str method to refuse.
void escape_argument(CallArgs& args, size_t index, std::string_view name) {
  if (index < args.positional.size()) {
    Value& arg = args.positional[index];
    if (arg.is_string()) arg = escape_markup(arg);
  }
  for (auto& [keyword, arg] : args.keyword) {
    if (keyword == name && arg.is_string()) arg = escape_markup(arg);
  }
}

Value to_markup(const Value& value) {
  return value.is_string() ? Value::markup(value.string_ptr()) : value;
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    // Each character adds at most 5 bytes, so out passes the limit by at most that much.
    if (out.size() > kMaxStringBytes) check_string_bytes(out.size(), "escape result");
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  check_string_bytes(out.size(), "escape result");
  return out;
}

Value escape_markup(const Value& value) {
  if (value.is_markup()) return value;
  return Value::markup(html_escape(to_str(value)));
}

Value mark_safe(const Value& value) {
  if (value.is_markup()) return value;
  if (value.is_string()) return Value::markup(value.string_ptr());
  return Value::markup(to_str(value));
}

Value keep_markup(const Value& like, std::string text) {
  return like.is_markup() ? Value::markup(std::move(text)) : Value::string(std::move(text));
}

Value add_markup(const Value& a, const Value& b) {
  const Value left = escape_markup(a);
  const Value right = escape_markup(b);
  return to_markup(concat_strings(left.as_string(), right.as_string()));
}

Value call_markup_method(const Value& self, std::string_view name, const CallArgs& args) {
  const std::string& text = self.as_string();
  if (name == "format") return Value::markup(python_str_format(text, args, FieldEscaping::Html));
  CallArgs escaped = args;
  if (name == "join") {
    if (!escaped.positional.empty()) {
      const ListPtr items = iterate(escaped.positional[0]);
      std::vector<Value> escaped_items;
      escaped_items.reserve(items->items.size());
      for (const Value& item : items->items) escaped_items.push_back(escape_markup(item));
      escaped.positional[0] = make_list(std::move(escaped_items));
    }
    return to_markup(call_string_method(text, name, escaped));
  }
  if (name == "replace") escape_argument(escaped, 1, "new");
  if (name == "ljust" || name == "rjust" || name == "center") {
    escape_argument(escaped, 1, "fillchar");
  }
  Value result = call_string_method(text, name, escaped);
  if (contains_name(kMarkupResultMethods, name)) return to_markup(result);
  if (contains_name(kMarkupListMethods, name)) {
    std::vector<Value> parts = result.as_list().items;
    for (Value& part : parts) part = to_markup(part);
    return make_list(std::move(parts));
  }
  return result;
}

}  // namespace sluice::jinja
