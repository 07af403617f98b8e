#include "engine/template/python_format.h"

#include <cmath>
#include <cstdio>

#include "engine/template/markup.h"
#include "engine/template/python_number.h"
#include "engine/template/python_string.h"
#include "engine/template/render_fault.h"
#include "engine/template/value_access.h"
#include "engine/tokenizer/unicode.h"

namespace sluice::jinja {

namespace {

// A parsed conversion: flags, width and precision shared by both mini-languages.
struct Spec {
  char fill = ' ';
  char align = 0;  // '<', '>', '^', '=' or 0 for the type's default
  char sign = '-';
  bool zero_pad = false;
  bool alternate = false;
  bool thousands = false;
  int width = -1;
  int precision = -1;
  char type = 0;
};

std::string c_format(const char* pattern, int precision, double value) {
  // Sized first: a precision of up to 100000 digits is allowed, and Python prints them all.
  const int length = std::snprintf(nullptr, 0, pattern, precision, value);
  if (length <= 0) return "";
  std::string out(static_cast<size_t>(length) + 1, '\0');
  std::snprintf(out.data(), out.size(), pattern, precision, value);
  out.resize(static_cast<size_t>(length));
  return out;
}

std::string to_base(uint64_t magnitude, int base, bool upper) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), digits[magnitude % static_cast<uint64_t>(base)]);
    magnitude /= static_cast<uint64_t>(base);
  } while (magnitude > 0);
  return out;
}

std::string group_thousands(const std::string& digits) {
  std::string out;
  const size_t dot = digits.find('.');
  const size_t int_end = dot == std::string::npos ? digits.size() : dot;
  for (size_t i = 0; i < int_end; ++i) {
    if (i > 0 && (int_end - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out + digits.substr(int_end);
}

// Pads body (whose sign, if any, is sign_text) to the spec's width.
std::string pad(const std::string& sign_text, const std::string& body, const Spec& spec,
                bool is_numeric) {
  if (spec.width <= 0) return sign_text + body;  // no width: nothing to count
  const auto length = static_cast<int>(count_codepoints(sign_text) + count_codepoints(body));
  if (spec.width <= length) return sign_text + body;
  const auto gap = static_cast<size_t>(spec.width - length);
  char align = spec.align != 0 ? spec.align : (is_numeric ? '>' : '<');
  char fill = spec.fill;
  if (spec.zero_pad && spec.align == 0 && is_numeric) {
    align = '=';
    fill = '0';
  }
  if (align == '=') return sign_text + std::string(gap, fill) + body;
  if (align == '<') return sign_text + body + std::string(gap, fill);
  if (align == '^')
    return std::string(gap / 2, fill) + sign_text + body + std::string(gap - gap / 2, fill);
  return std::string(gap, fill) + sign_text + body;
}

std::string sign_prefix(bool negative, const Spec& spec) {
  if (negative) return "-";
  return spec.sign == '+' ? "+" : spec.sign == ' ' ? " " : "";
}

double require_number(const Value& value, char type) {
  if (!value.is_number()) {
    render_fail("format ", type, " requires a real number, not ", type_name(value));
  }
  return value.as_float();
}

std::string format_integer(const Value& value, const Spec& spec) {
  if (!value.is_number()) {
    render_fail("%", spec.type, " format: a real number is required, not ", type_name(value));
  }
  const int64_t number =
      value.is_float() ? static_cast<int64_t>(std::trunc(value.as_float())) : value.as_int();
  const uint64_t magnitude =
      number < 0 ? 0 - static_cast<uint64_t>(number) : static_cast<uint64_t>(number);
  const char type = spec.type;
  std::string body = type == 'x' || type == 'X' ? to_base(magnitude, 16, type == 'X')
                     : type == 'o'              ? to_base(magnitude, 8, false)
                     : type == 'b'              ? to_base(magnitude, 2, false)
                                                : std::to_string(magnitude);
  if (spec.precision > static_cast<int>(body.size()) && spec.type != 0) {
    body.insert(0, static_cast<size_t>(spec.precision) - body.size(), '0');  // %.3d
  }
  if (spec.thousands) body = group_thousands(body);
  if (spec.alternate && (type == 'x' || type == 'X' || type == 'o' || type == 'b')) {
    body.insert(0, std::string("0") + type);
  }
  return pad(sign_prefix(number < 0, spec), body, spec, true);
}

std::string format_float(const Value& value, const Spec& spec) {
  double number = require_number(value, spec.type);
  const bool negative = std::signbit(number);
  number = std::fabs(number);
  const int precision = spec.precision < 0 ? 6 : spec.precision;
  std::string body;
  switch (spec.type) {
    case 'f':
    case 'F':
      body = c_format("%.*f", precision, number);
      break;
    case 'e':
      body = c_format("%.*e", precision, number);
      break;
    case 'E':
      body = c_format("%.*E", precision, number);
      break;
    case 'g':
      body = c_format("%.*g", precision == 0 ? 1 : precision, number);
      break;
    case 'G':
      body = c_format("%.*G", precision == 0 ? 1 : precision, number);
      break;
    case '%':
      body = c_format("%.*f", precision, number * 100.0) + "%";
      break;
    default:
      body = python_float_repr(number);
      break;
  }
  if (spec.thousands) body = group_thousands(body);
  return pad(sign_prefix(negative, spec), body, spec, true);
}

std::string format_text(const std::string& text, const Spec& spec) {
  if (spec.precision < 0) return pad("", text, spec, false);
  const std::u32string codepoints = to_codepoints(text);
  const size_t keep = std::min(codepoints.size(), static_cast<size_t>(spec.precision));
  return pad("", from_codepoints(std::u32string_view(codepoints).substr(0, keep)), spec, false);
}

std::string format_value(const Value& value, Spec spec) {
  switch (spec.type) {
    case 'd':
    case 'i':
    case 'u':
    case 'x':
    case 'X':
    case 'o':
    case 'b':
      return format_integer(value, spec);
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case '%':
      return format_float(value, spec);
    case 'r':
    case 'a':
      return format_text(to_repr(value), spec);
    case 'c': {
      if (value.is_string()) return format_text(value.as_string(), spec);
      if (!value.is_int() && !value.is_bool()) render_fail("%c requires an int or a character");
      if (value.as_int() < 0 || value.as_int() > 0x10FFFF) {
        render_fail("%c arg not in range(0x110000)");
      }
      std::string text;
      append_utf8(text, static_cast<char32_t>(value.as_int()));
      return format_text(text, spec);
    }
    default:
      break;
  }
  if (spec.type == 0 && value.is_number() && !value.is_bool()) {
    return value.is_float() ? format_float(value, spec) : format_integer(value, spec);
  }
  return format_text(to_str(value), spec);
}

int parse_number(std::string_view text, size_t& i) {
  int value = -1;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    value = (value < 0 ? 0 : value) * 10 + (text[i++] - '0');
    if (value > 100000) render_fail("format width or precision is too big");
  }
  return value;
}

// Parses str.format's [[fill]align][sign][#][0][width][,][.precision][type].
Spec parse_format_spec(std::string_view text) {
  Spec spec;
  size_t i = 0;
  const auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (text.size() >= 2 && is_align(text[1])) {
    spec.fill = text[0];
    spec.align = text[1];
    i = 2;
  } else if (!text.empty() && is_align(text[0])) {
    spec.align = text[0];
    i = 1;
  }
  if (i < text.size() && (text[i] == '+' || text[i] == '-' || text[i] == ' '))
    spec.sign = text[i++];
  if (i < text.size() && text[i] == '#') spec.alternate = (++i, true);
  if (i < text.size() && text[i] == '0') spec.zero_pad = (++i, true);
  spec.width = parse_number(text, i);
  if (i < text.size() && text[i] == ',') spec.thousands = (++i, true);
  if (i < text.size() && text[i] == '.') {
    ++i;
    spec.precision = parse_number(text, i);
  }
  if (i < text.size()) spec.type = text[i++];
  if (i != text.size()) render_fail("invalid format specifier '", text, "'");
  return spec;
}

// Parses a %-conversion's flags, width and precision from format[i]; leaves i at the type.
Spec parse_percent_spec(std::string_view format, size_t& i) {
  Spec spec;
  for (; i < format.size(); ++i) {
    const char c = format[i];
    if (c == '-')
      spec.align = '<';
    else if (c == '+')
      spec.sign = '+';
    else if (c == ' ')
      spec.sign = spec.sign == '+' ? '+' : ' ';
    else if (c == '0')
      spec.zero_pad = true;
    else if (c == '#')
      spec.alternate = true;
    else
      break;
  }
  spec.width = parse_number(format, i);
  if (i < format.size() && format[i] == '.') {
    ++i;
    spec.precision = std::max(parse_number(format, i), 0);
  }
  while (i < format.size() && (format[i] == 'h' || format[i] == 'l' || format[i] == 'L')) ++i;
  if (spec.align == '<') spec.zero_pad = false;
  return spec;
}

// Follows "{name.attr[0]}" from the named value: `.x` reads an attribute, `[k]` an item (an
// integer index when k is all digits).
Value resolve_field_path(Value value, std::string_view path) {
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '.') {
      const size_t end = std::min(path.find('.', i + 1), path.find('[', i + 1));
      value = get_attribute(value, path.substr(i + 1, end - i - 1));
      i = end == std::string_view::npos ? path.size() : end;
    } else if (path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == std::string_view::npos) render_fail("missing ']' in format string");
      const std::string_view key = path.substr(i + 1, close - i - 1);
      const std::optional<int64_t> index = python_parse_int(key, 10);
      value = get_item(value, index && key.find_first_not_of("0123456789") == std::string_view::npos
                                  ? Value::integer(*index)
                                  : Value::string(std::string(key)));
      i = close + 1;
    } else {
      render_fail("invalid field name in format string");
    }
  }
  return value;
}

// Formats one replacement field "name.attr[0]!r:>8" of str.format; next_index numbers the
// fields written "{}".
std::string format_field(std::string_view field, const CallArgs& args, size_t& next_index,
                         FieldEscaping escaping) {
  std::string_view spec_text;
  if (const size_t colon = field.find(':'); colon != std::string_view::npos) {
    spec_text = field.substr(colon + 1);
    field = field.substr(0, colon);
  }
  char conversion = 0;
  if (const size_t bang = field.find('!'); bang != std::string_view::npos) {
    conversion = bang + 1 < field.size() ? field[bang + 1] : 0;
    field = field.substr(0, bang);
  }
  const size_t name_end = std::min(field.find('.'), field.find('['));
  const std::string_view name = field.substr(0, name_end);
  Value value;
  if (name.empty()) {
    if (next_index >= args.positional.size()) {
      render_fail("Replacement index ", next_index, " out of range");
    }
    value = args.positional[next_index++];
  } else if (name[0] >= '0' && name[0] <= '9') {
    const auto index = static_cast<size_t>(python_parse_int(name, 10).value_or(-1));
    if (index >= args.positional.size()) render_fail("Replacement index ", name, " out of range");
    value = args.positional[index];
  } else {
    const Value* keyword = args.find_keyword(name);
    if (keyword == nullptr) render_fail("KeyError: '", name, "'");
    value = *keyword;
  }
  if (name_end != std::string_view::npos) value = resolve_field_path(value, field.substr(name_end));
  if (conversion == 'r' || conversion == 'a') value = Value::string(to_repr(value));
  if (conversion == 's') value = Value::string(to_str(value));
  std::string text = format_value(value, parse_format_spec(spec_text));
  if (escaping == FieldEscaping::Html && !value.is_markup()) return html_escape(text);
  return text;
}

// The text a %s / %r / %a conversion pads: with Html escaping, escaped unless it is markup's
// own text (markupsafe escapes str(arg) or repr(arg) before % pads it).
std::string percent_text(const Value& value, char conversion, FieldEscaping escaping) {
  const bool is_repr = conversion != 's';
  std::string text = is_repr ? to_repr(value) : to_str(value);
  if (escaping == FieldEscaping::Html && (is_repr || !value.is_markup())) return html_escape(text);
  return text;
}

}  // namespace

std::string python_percent_format(std::string_view format, const Value& args,
                                  FieldEscaping escaping) {
  const bool is_tuple = args.is_list() && args.as_list().flavor == ListFlavor::Tuple;
  const std::vector<Value> single{args};
  const std::vector<Value>& values = is_tuple ? args.as_list().items : single;
  size_t next_value = 0;
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (++i >= format.size()) render_fail("incomplete format");
    const Value* value = nullptr;
    if (format[i] == '(') {
      const size_t close = format.find(')', i);
      if (close == std::string_view::npos) render_fail("incomplete format key");
      if (!args.is_dict()) render_fail("format requires a mapping");
      value = args.as_dict().find(format.substr(i + 1, close - i - 1));
      if (value == nullptr) render_fail("KeyError: '", format.substr(i + 1, close - i - 1), "'");
      i = close + 1;
    }
    Spec spec = parse_percent_spec(format, i);
    if (i >= format.size()) render_fail("incomplete format");
    spec.type = format[i] == 's' ? 0 : format[i];
    if (format[i] == '%') {
      out += '%';
      continue;
    }
    if (std::string_view("srdiufFeEgGxXoca").find(format[i]) == std::string_view::npos) {
      render_fail("unsupported format character '", format[i], "'");
    }
    if (value == nullptr) {
      if (next_value >= values.size()) render_fail("not enough arguments for format string");
      value = &values[next_value++];
    }
    if (std::string_view("srac").find(format[i]) != std::string_view::npos) {
      // %-formatting right-aligns text unless '-' is given, and never zero-pads it.
      if (spec.align != '<') spec.align = '>';
      spec.zero_pad = false;
    }
    const bool is_text = format[i] == 's' || format[i] == 'r' || format[i] == 'a';
    append_bounded(out, is_text ? format_text(percent_text(*value, format[i], escaping), spec)
                                : format_value(*value, spec));
  }
  if (!args.is_dict() && next_value < values.size()) {
    render_fail("not all arguments converted during string formatting");
  }
  return out;
}

std::string python_str_format(std::string_view format, const CallArgs& args,
                              FieldEscaping escaping) {
  std::string out;
  size_t next_index = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    const bool is_doubled = i + 1 < format.size() && format[i + 1] == c;
    if (c == '}') {
      if (!is_doubled) render_fail("single '}' encountered in format string");
      out += '}';
      ++i;
    } else if (c != '{') {
      out += c;
    } else if (is_doubled) {
      out += '{';
      ++i;
    } else {
      const size_t close = format.find('}', i);
      if (close == std::string_view::npos) render_fail("expected '}' before end of string");
      append_bounded(out,
                     format_field(format.substr(i + 1, close - i - 1), args, next_index, escaping));
      i = close;
    }
  }
  return out;
}

}  // namespace sluice::jinja
