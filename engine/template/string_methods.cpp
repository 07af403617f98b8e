#include "engine/template/string_methods.h"

#include <algorithm>
#include <array>

#include "engine/template/python_format.h"
#include "engine/template/python_string.h"
#include "engine/template/render_fault.h"

namespace sluice::jinja {

namespace {

constexpr std::array<std::string_view, 33> kStringMethods{
    "strip",    "lstrip",  "rstrip",  "split",   "rsplit",       "splitlines",   "startswith",
    "endswith", "upper",   "lower",   "title",   "capitalize",   "casefold",     "replace",
    "format",   "find",    "rfind",   "index",   "rindex",       "count",        "join",
    "center",   "ljust",   "rjust",   "zfill",   "removeprefix", "removesuffix", "isdigit",
    "isalpha",  "isalnum", "isspace", "islower", "isupper"};

std::optional<std::string> optional_string(const BoundArgs& bound, size_t index,
                                           std::string_view method) {
  if (!bound.has(index) || bound.get(index).is_none()) return std::nullopt;
  if (!bound.get(index).is_string()) {
    render_fail(method, "() argument must be str or None, not ", type_name(bound.get(index)));
  }
  return bound.get(index).as_string();
}

const std::string& string_arg(const BoundArgs& bound, size_t index, std::string_view method) {
  if (!bound.get(index).is_string()) {
    render_fail(method, "() argument must be str, not ", type_name(bound.get(index)));
  }
  return bound.get(index).as_string();
}

std::optional<int64_t> optional_int(const BoundArgs& bound, size_t index, std::string_view method) {
  if (!bound.has(index) || bound.get(index).is_none()) return std::nullopt;
  const Value& value = bound.get(index);
  if (!value.is_int() && !value.is_bool()) {
    render_fail(method, "() expects an integer argument, not ", type_name(value));
  }
  return value.as_int();
}

Value string_list(std::vector<std::string> parts) {
  std::vector<Value> items;
  items.reserve(parts.size());
  for (std::string& part : parts) items.push_back(Value::string(std::move(part)));
  return make_list(std::move(items));
}

// str.rsplit: split from the right, so maxsplit keeps the left part whole.
std::vector<std::string> rsplit(const std::string& self, const std::optional<std::string>& sep,
                                int64_t maxsplit) {
  if (maxsplit < 0) return python_split(self, sep, -1);
  std::u32string reversed = to_codepoints(self);
  std::reverse(reversed.begin(), reversed.end());
  std::optional<std::string> reversed_sep;
  if (sep) {
    std::u32string sep_codepoints = to_codepoints(*sep);
    std::reverse(sep_codepoints.begin(), sep_codepoints.end());
    reversed_sep = from_codepoints(sep_codepoints);
  }
  std::vector<std::string> parts = python_split(from_codepoints(reversed), reversed_sep, maxsplit);
  std::reverse(parts.begin(), parts.end());
  for (std::string& part : parts) {
    std::u32string codepoints = to_codepoints(part);
    std::reverse(codepoints.begin(), codepoints.end());
    part = from_codepoints(codepoints);
  }
  return parts;
}

bool matches_affix(const std::string& self, const Value& affix, bool at_start) {
  const auto matches = [&](const Value& candidate) {
    if (!candidate.is_string()) {
      render_fail(at_start ? "startswith" : "endswith",
                  " first arg must be str or a tuple of str, not ", type_name(candidate));
    }
    const std::string& text = candidate.as_string();
    if (text.size() > self.size()) return false;
    return at_start ? self.compare(0, text.size(), text) == 0
                    : self.compare(self.size() - text.size(), text.size(), text) == 0;
  };
  if (affix.is_list() && affix.as_list().flavor == ListFlavor::Tuple) {
    return std::any_of(affix.as_list().items.begin(), affix.as_list().items.end(), matches);
  }
  return matches(affix);
}

std::string join(const std::string& separator, const Value& iterable) {
  const ListPtr items = iterate(iterable);
  std::string out;
  for (size_t i = 0; i < items->items.size(); ++i) {
    const Value& item = items->items[i];
    if (!item.is_string()) {
      render_fail("sequence item ", i, ": expected str instance, ", type_name(item), " found");
    }
    if (i > 0) append_bounded(out, separator);
    append_bounded(out, item.as_string());
  }
  return out;
}

std::string justify(const std::string& self, const BoundArgs& bound, char align,
                    std::string_view method) {
  const int64_t width = optional_int(bound, 0, method).value_or(0);
  const std::string fill = bound.has(1) ? string_arg(bound, 1, method) : " ";
  if (count_codepoints(fill) != 1)
    render_fail("The fill character must be exactly one character long");
  const auto length = static_cast<int64_t>(count_codepoints(self));
  if (width <= length) return self;
  const int64_t gap = width - length;
  check_string_bytes(static_cast<uint64_t>(gap) * fill.size() + self.size(), "string result");
  // Python's center puts the odd extra character on the left when the width is odd.
  const int64_t left = align == '<' ? 0 : align == '>' ? gap : gap / 2 + (gap & width & 1);
  std::string out;
  for (int64_t i = 0; i < left; ++i) out += fill;
  out += self;
  for (int64_t i = 0; i < gap - left; ++i) out += fill;
  return out;
}

Value find(const std::string& self, std::string_view name, const CallArgs& args) {
  const BoundArgs bound(args, {"sub", "start", "end"}, 1, name);
  const bool from_right = name == "rfind" || name == "rindex";
  const int64_t position =
      python_find(self, string_arg(bound, 0, name), optional_int(bound, 1, name),
                  optional_int(bound, 2, name), from_right);
  if (position < 0 && (name == "index" || name == "rindex")) render_fail("substring not found");
  return Value::integer(position);
}

Value predicate(const std::string& self, std::string_view name) {
  if (name == "isdigit") return Value::boolean(python_is_digit(self));
  if (name == "isalpha") return Value::boolean(python_is_alpha(self));
  if (name == "isalnum") return Value::boolean(python_is_alnum(self));
  if (name == "isspace") return Value::boolean(python_is_space(self));
  if (name == "islower") return Value::boolean(python_is_lower(self));
  return Value::boolean(python_is_upper(self));
}

Value split_method(const std::string& self, std::string_view name, const CallArgs& args) {
  const BoundArgs bound(args, {"sep", "maxsplit"}, 0, name);
  const std::optional<std::string> sep = optional_string(bound, 0, name);
  if (sep && sep->empty()) render_fail("empty separator");
  const int64_t maxsplit = optional_int(bound, 1, name).value_or(-1);
  return string_list(name == "split" ? python_split(self, sep, maxsplit)
                                     : rsplit(self, sep, maxsplit));
}

Value strip_method(const std::string& self, std::string_view name, const CallArgs& args) {
  const BoundArgs bound(args, {"chars"}, 0, name);
  const StripSide side = name == "lstrip"   ? StripSide::Left
                         : name == "rstrip" ? StripSide::Right
                                            : StripSide::Both;
  return Value::string(python_strip(self, optional_string(bound, 0, name), side));
}

Value affix_method(const std::string& self, std::string_view name, const CallArgs& args) {
  const BoundArgs bound(args, {"affix"}, 1, name);
  if (name == "startswith" || name == "endswith") {
    return Value::boolean(matches_affix(self, bound.get(0), name == "startswith"));
  }
  const std::string& affix = string_arg(bound, 0, name);
  const bool is_prefix = name == "removeprefix";
  const bool present = is_prefix
                           ? self.rfind(affix, 0) == 0
                           : self.size() >= affix.size() &&
                                 self.compare(self.size() - affix.size(), affix.size(), affix) == 0;
  if (!present) return Value::string(self);
  return Value::string(is_prefix ? self.substr(affix.size())
                                 : self.substr(0, self.size() - affix.size()));
}

}  // namespace

bool is_string_method(std::string_view name) {
  return std::find(kStringMethods.begin(), kStringMethods.end(), name) != kStringMethods.end();
}

Value call_string_method(const std::string& self, std::string_view name, const CallArgs& args) {
  if (name == "strip" || name == "lstrip" || name == "rstrip")
    return strip_method(self, name, args);
  if (name == "split" || name == "rsplit") return split_method(self, name, args);
  if (name == "startswith" || name == "endswith" || name == "removeprefix" ||
      name == "removesuffix") {
    return affix_method(self, name, args);
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
    return find(self, name, args);
  }
  if (name == "format") return Value::string(python_str_format(self, args));
  if (name == "splitlines") {
    const BoundArgs bound(args, {"keepends"}, 0, name);
    return string_list(python_splitlines(self, bound.has(0) && is_truthy(bound.get(0))));
  }
  if (name == "replace") {
    const BoundArgs bound(args, {"old", "new", "count"}, 2, name);
    return Value::string(python_replace(self, string_arg(bound, 0, name),
                                        string_arg(bound, 1, name),
                                        optional_int(bound, 2, name).value_or(-1)));
  }
  if (name == "count") {
    const BoundArgs bound(args, {"sub"}, 1, name);
    return Value::integer(python_count(self, string_arg(bound, 0, name)));
  }
  if (name == "join") {
    const BoundArgs bound(args, {"iterable"}, 1, name);
    return Value::string(join(self, bound.get(0)));
  }
  if (name == "center" || name == "ljust" || name == "rjust") {
    const BoundArgs bound(args, {"width", "fillchar"}, 1, name);
    return Value::string(justify(self, bound,
                                 name == "center"  ? '^'
                                 : name == "ljust" ? '<'
                                                   : '>',
                                 name));
  }
  if (name == "zfill") {
    const BoundArgs bound(args, {"width"}, 1, name);
    const int64_t width = optional_int(bound, 0, name).value_or(0);
    const bool has_sign = !self.empty() && (self[0] == '-' || self[0] == '+');
    const auto length = static_cast<int64_t>(count_codepoints(self));
    if (width <= length) return Value::string(self);
    check_string_bytes(static_cast<uint64_t>(width), "zfill result");
    const std::string zeros(static_cast<size_t>(width - length), '0');
    return Value::string(has_sign ? self.substr(0, 1) + zeros + self.substr(1) : zeros + self);
  }
  const BoundArgs no_args(args, {}, 0, name);
  if (name == "upper") return Value::string(python_upper(self));
  if (name == "lower" || name == "casefold") return Value::string(python_lower(self));
  if (name == "title") return Value::string(python_title(self));
  if (name == "capitalize") return Value::string(python_capitalize(self));
  return predicate(self, name);
}

}  // namespace sluice::jinja
