#include "engine/template/template_filters.h"

#include <array>
#include <cmath>

#include "engine/template/call_args.h"
#include "engine/template/markup.h"
#include "engine/template/python_format.h"
#include "engine/template/python_number.h"
#include "engine/template/python_string.h"
#include "engine/template/render_fault.h"
#include "engine/template/render_state.h"
#include "engine/template/sequence_filters.h"
#include "engine/template/simple_case.h"
#include "engine/template/template_json.h"
#include "engine/template/value_access.h"
#include "engine/tokenizer/unicode.h"

namespace sluice::jinja {

namespace {

int64_t int_option(const Value& value, std::string_view what) {
  if (!value.is_int() && !value.is_bool())
    render_fail(what, " must be an integer, not ", type_name(value));
  return value.as_int();
}

Value filter_abs(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "abs");
  if (input.is_float()) return Value::floating(std::fabs(input.as_float()));
  if (input.is_int() || input.is_bool()) {
    if (input.as_int() == INT64_MIN) render_fail("integer overflow in abs");
    return Value::integer(input.as_int() < 0 ? -input.as_int() : input.as_int());
  }
  render_fail("bad operand type for abs(): '", type_name(input), "'");
}

Value filter_attr(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"name"}, 1, "attr");
  if (!bound.get(0).is_string()) render_fail("attribute name must be a string");
  return get_attribute(input, bound.get(0).as_string());
}

Value filter_capitalize(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "capitalize");
  return keep_markup(input, python_capitalize(to_str(input)));
}

Value filter_center(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"width"}, 0, "center");
  const int64_t width = bound.has(0) ? int_option(bound.get(0), "width") : 80;
  const std::string text = to_str(input);
  const auto length = static_cast<int64_t>(count_codepoints(text));
  if (width <= length) return keep_markup(input, text);
  check_string_bytes(static_cast<uint64_t>(width - length) + text.size(), "center result");
  const int64_t gap = width - length;
  const int64_t left = gap / 2 + (gap & width & 1);  // Python's str.center
  return keep_markup(input, std::string(static_cast<size_t>(left), ' ') + text +
                                std::string(static_cast<size_t>(gap - left), ' '));
}

Value filter_default(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"default_value", "boolean"}, 0, "default");
  const bool use_default =
      input.is_undefined() || (bound.has(1) && is_truthy(bound.get(1)) && !is_truthy(input));
  if (!use_default) return input;
  return bound.get_or(0, Value::string(""));
}

// escape / e: markup stays as it is (no double escaping).
Value filter_escape(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "escape");
  return escape_markup(input);
}

// forceescape: escapes markup's text too.
Value filter_forceescape(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "forceescape");
  return Value::markup(html_escape(to_str(input)));
}

Value filter_float(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"default"}, 0, "float");
  if (input.is_number()) return Value::floating(input.as_float());
  if (input.is_string()) {
    if (const std::optional<double> parsed = python_parse_float(input.as_string())) {
      return Value::floating(*parsed);
    }
  }
  return bound.get_or(0, Value::floating(0.0));
}

Value filter_int(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"default", "base"}, 0, "int");
  const int base = bound.has(1) ? static_cast<int>(int_option(bound.get(1), "base")) : 10;
  if (input.is_int() || input.is_bool()) return Value::integer(input.as_int());
  std::optional<double> as_float;
  if (input.is_float()) as_float = input.as_float();
  if (input.is_string()) {
    if (const std::optional<int64_t> parsed = python_parse_int(input.as_string(), base)) {
      return Value::integer(*parsed);
    }
    as_float = python_parse_float(input.as_string());  // "42.23"|int is 42, as in Jinja2
  }
  if (as_float && std::isfinite(*as_float) && std::fabs(*as_float) < 9.2e18) {
    return Value::integer(static_cast<int64_t>(std::trunc(*as_float)));
  }
  return bound.get_or(0, Value::integer(0));
}

// soft_str(input) % args: markup escapes the arguments.
Value format_percent(const Value& input, const Value& args) {
  if (input.is_markup()) {
    return Value::markup(python_percent_format(input.as_string(), args, FieldEscaping::Html));
  }
  return Value::string(python_percent_format(to_str(input), args));
}

Value filter_format(RenderState&, const Value& input, const CallArgs& args) {
  if (!args.positional.empty() && !args.keyword.empty()) {
    render_fail("can't handle positional and keyword arguments at the same time");
  }
  if (!args.keyword.empty()) {
    Dict mapping;
    for (const auto& [key, value] : args.keyword) mapping.set(key, value);
    return format_percent(input, make_dict(std::move(mapping)));
  }
  return format_percent(input, make_list(args.positional, ListFlavor::Tuple));
}

Value filter_indent(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"width", "first", "blank"}, 0, "indent");
  const Value width = bound.get_or(0, Value::integer(4));
  const int64_t num_spaces =
      width.is_string() ? 0 : std::max<int64_t>(int_option(width, "width"), 0);
  check_string_bytes(static_cast<uint64_t>(num_spaces), "indent width");
  const std::string indentation =
      width.is_string() ? width.as_string() : std::string(static_cast<size_t>(num_spaces), ' ');
  const bool indent_first = bound.has(1) && is_truthy(bound.get(1));
  const bool indent_blank = bound.has(2) && is_truthy(bound.get(2));
  // Jinja2 appends a newline before splitting, so a trailing newline is not kept.
  const std::vector<std::string> lines = python_splitlines(to_str(input) + "\n", false);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) append_bounded(out, "\n");
    const bool indents = i == 0 ? indent_first : (indent_blank || !lines[i].empty());
    if (indents) append_bounded(out, indentation);
    append_bounded(out, lines[i]);
  }
  return keep_markup(input, std::move(out));  // Jinja2 joins markup's lines as markup
}

Value filter_lower(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "lower");
  return keep_markup(input, python_lower(to_str(input)));
}

Value filter_upper(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "upper");
  return keep_markup(input, python_upper(to_str(input)));
}

Value filter_replace(RenderState& state, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"old", "new", "count"}, 2, "replace");
  const int64_t count =
      bound.has(2) && !bound.get(2).is_none() ? int_option(bound.get(2), "count") : -1;
  const std::string text = to_str(input);
  const std::string old_text = to_str(bound.get(0));
  state.budget.spend_search(text.size(), old_text.size());
  return Value::string(python_replace(text, old_text, to_str(bound.get(1)), count));
}

Value filter_round(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"precision", "method"}, 0, "round");
  const int64_t precision = bound.has(0) ? int_option(bound.get(0), "precision") : 0;
  const std::string method = bound.has(1) ? to_str(bound.get(1)) : "common";
  if (method != "common" && method != "ceil" && method != "floor") {
    render_fail("method must be common, ceil or floor");
  }
  if (!input.is_number())
    render_fail("type ", type_name(input), " doesn't define __round__ method");
  if (method == "common") {
    // Python's round() keeps an int an int.
    if (!input.is_float()) return Value::integer(input.as_int());
    return Value::floating(python_round(input.as_float(), precision));
  }
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double scaled = input.as_float() * scale;
  return Value::floating((method == "ceil" ? std::ceil(scaled) : std::floor(scaled)) / scale);
}

// string: Jinja2's soft_str, which keeps markup markup.
Value filter_string(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "string");
  return input.is_string() ? input : Value::string(to_str(input));
}

Value filter_safe(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "safe");
  return mark_safe(input);
}

Value filter_title(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "title");
  // Jinja2's own title: a word starts after '-', whitespace or an opening bracket, so
  // "it's" stays "It's" (Python's str.title would give "It'S").
  const std::string text = to_str(input);
  std::string out;
  bool at_word_start = true;
  for (const char32_t c : to_codepoints(text)) {
    const bool is_separator =
        c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || is_python_space(c);
    if (is_separator) {
      append_utf8(out, c);
      at_word_start = true;
    } else if (at_word_start) {
      append_upper(out, c);
      at_word_start = false;
    } else {
      append_lower(out, c);
    }
  }
  return Value::string(std::move(out));
}

Value filter_tojson(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"ensure_ascii", "indent", "separators", "sort_keys"}, 0, "tojson");
  JsonDumpOptions options;
  options.ensure_ascii = bound.has(0) && is_truthy(bound.get(0));
  if (bound.has(1) && !bound.get(1).is_none()) {
    const Value& indent = bound.get(1);
    const int64_t num_spaces =
        indent.is_string() ? 0 : std::max<int64_t>(int_option(indent, "indent"), 0);
    check_string_bytes(static_cast<uint64_t>(num_spaces), "tojson indent");
    options.indent =
        indent.is_string() ? indent.as_string() : std::string(static_cast<size_t>(num_spaces), ' ');
    options.item_separator = std::string(",");  // json.dumps drops the space when indenting
  }
  if (bound.has(2) && !bound.get(2).is_none()) {
    const Value& separators = bound.get(2);
    if (!separators.is_list() || separators.as_list().items.size() != 2) {
      render_fail("separators must be a (item_separator, key_separator) pair");
    }
    options.item_separator = to_str(separators.as_list().items[0]);
    options.key_separator = to_str(separators.as_list().items[1]);
  }
  options.sort_keys = bound.has(3) && is_truthy(bound.get(3));
  return Value::string(python_json_dumps(input, options));
}

Value filter_trim(RenderState& state, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"chars"}, 0, "trim");
  std::optional<std::string> chars;
  if (bound.has(0) && !bound.get(0).is_none()) chars = to_str(bound.get(0));
  const std::string text = to_str(input);
  if (chars) state.budget.spend_search(text.size(), chars->size());
  return keep_markup(input, python_strip(text, chars, StripSide::Both));
}

Value filter_wordcount(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "wordcount");
  int64_t count = 0;
  bool in_word = false;
  for (const char32_t c : to_codepoints(to_str(input))) {
    const bool is_word_char = c == '_' || is_unicode_letter(c) || is_unicode_number(c);  // \w
    if (is_word_char && !in_word) ++count;
    in_word = is_word_char;
  }
  return Value::integer(count);
}

struct FilterEntry {
  std::string_view name;
  FilterFn fn;
};

constexpr std::array<FilterEntry, 43> kFilters{{
    {"abs", filter_abs},
    {"attr", filter_attr},
    {"capitalize", filter_capitalize},
    {"center", filter_center},
    {"default", filter_default},
    {"d", filter_default},
    {"escape", filter_escape},
    {"e", filter_escape},
    {"forceescape", filter_forceescape},
    {"float", filter_float},
    {"format", filter_format},
    {"indent", filter_indent},
    {"int", filter_int},
    {"lower", filter_lower},
    {"upper", filter_upper},
    {"replace", filter_replace},
    {"round", filter_round},
    {"string", filter_string},
    {"safe", filter_safe},
    {"title", filter_title},
    {"tojson", filter_tojson},
    {"trim", filter_trim},
    {"wordcount", filter_wordcount},
    {"length", filter_length},
    {"count", filter_length},
    {"first", filter_first},
    {"last", filter_last},
    {"join", filter_join},
    {"list", filter_list},
    {"items", filter_items},
    {"map", filter_map},
    {"select", filter_select},
    {"reject", filter_reject},
    {"selectattr", filter_selectattr},
    {"rejectattr", filter_rejectattr},
    {"sort", filter_sort},
    {"dictsort", filter_dictsort},
    {"unique", filter_unique},
    {"reverse", filter_reverse},
    {"sum", filter_sum},
    {"min", filter_min},
    {"max", filter_max},
    {"batch", filter_batch},
}};

}  // namespace

FilterFn find_filter(std::string_view name) {
  for (const FilterEntry& entry : kFilters) {
    if (entry.name == name) return entry.fn;
  }
  return nullptr;
}

Value run_filter(RenderState& state, FilterFn fn, const Value& input, const CallArgs& args) {
  // |length of a list or dict reads its size only. Counting the whole value would charge work
  // that is not done: Qwen3's template takes messages|length in every turn of a loop over the
  // messages, which for a long conversation is gigabytes never read.
  const bool reads_size_only = fn == filter_length && (input.is_list() || input.is_dict());
  state.budget.spend_bytes(reads_size_only ? kItemBytes : value_bytes(input));
  state.budget.spend_args(args);
  Value result = fn(state, input, args);
  state.budget.spend_value(result);
  return result;
}

Value apply_filter(RenderState& state, std::string_view name, const Value& input,
                   const CallArgs& args) {
  const FilterFn fn = find_filter(name);
  if (fn == nullptr) render_fail("no filter named '", name, "'");
  return run_filter(state, fn, input, args);
}

}  // namespace sluice::jinja
