#include "engine/template/template_json.h"

#include <algorithm>
#include <cmath>

#include "engine/template/python_number.h"
#include "engine/template/render_fault.h"
#include "engine/template/template_operators.h"
#include "engine/tokenizer/unicode.h"

namespace sluice::jinja {

namespace {

constexpr int kMaxJsonDepth = 512;

void append_hex4(std::string& out, uint32_t value) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(value >> shift) & 0xF];
}

void append_json_string(std::string& out, const std::string& text, bool ensure_ascii) {
  out += '"';
  for (size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x80) {
      const Utf8Char c = decode_utf8(text, i);
      const size_t num_bytes = std::max<size_t>(c.num_bytes, 1);
      if (!ensure_ascii) {
        out.append(text, i, num_bytes);
      } else {
        const char32_t cp = c.status == Utf8Status::Valid ? c.codepoint : kReplacementCharacter;
        if (cp >= 0x10000) {  // a surrogate pair, as Python writes it
          append_hex4(out, 0xD800 + ((cp - 0x10000) >> 10));
          append_hex4(out, 0xDC00 + ((cp - 0x10000) & 0x3FF));
        } else {
          append_hex4(out, cp);
        }
      }
      i += num_bytes;
      continue;
    }
    switch (byte) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (byte < 0x20) {
          append_hex4(out, byte);
        } else {
          out += static_cast<char>(byte);
        }
    }
    ++i;
  }
  out += '"';
}

class JsonWriter {
 public:
  explicit JsonWriter(const JsonDumpOptions& options) : options_(options) {}

  void write(std::string& out, const Value& value, int depth) {
    if (depth > kMaxJsonDepth) render_fail("maximum recursion depth exceeded in tojson");
    switch (value.kind()) {
      case ValueKind::None:
        out += "null";
        return;
      case ValueKind::Bool:
        out += value.as_bool() ? "true" : "false";
        return;
      case ValueKind::Int:
        out += std::to_string(value.as_int());
        return;
      case ValueKind::Float:
        write_float(out, value.as_float());
        return;
      case ValueKind::String:
        append_json_string(out, value.as_string(), options_.ensure_ascii);
        return;
      case ValueKind::List:
        write_list(out, value.as_list(), depth);
        return;
      case ValueKind::Dict:
        write_dict(out, value.as_dict(), depth);
        return;
      default:
        render_fail("Object of type ", type_name(value), " is not JSON serializable");
    }
  }

 private:
  static void write_float(std::string& out, double value) {
    if (std::isnan(value)) {
      out += "NaN";
    } else if (std::isinf(value)) {
      out += value < 0 ? "-Infinity" : "Infinity";
    } else {
      out += python_float_repr(value);
    }
  }

  void newline(std::string& out, int level) const {
    out += '\n';
    for (int i = 0; i < level; ++i) append_bounded(out, *options_.indent);
  }

  void write_list(std::string& out, const List& list, int depth) {
    if (list.items.empty()) {
      out += "[]";
      return;
    }
    out += '[';
    for (size_t i = 0; i < list.items.size(); ++i) {
      if (i > 0) out += options_.item_separator;
      if (options_.indent) newline(out, depth + 1);
      write(out, list.items[i], depth + 1);
      check_string_bytes(out.size(), "tojson result");
    }
    if (options_.indent) newline(out, depth);
    out += ']';
  }

  // json.dumps turns a number, bool or None key into the string of its JSON value.
  void write_key(std::string& out, const Value& key) {
    switch (key.kind()) {
      case ValueKind::String:
        append_json_string(out, key.as_string(), options_.ensure_ascii);
        return;
      case ValueKind::None:
      case ValueKind::Bool:
      case ValueKind::Int:
      case ValueKind::Float: {
        std::string text;
        write(text, key, 0);
        out += '"';
        out += text;
        out += '"';
        return;
      }
      default:
        render_fail("keys must be str, int, float, bool or None, not ", type_name(key));
    }
  }

  void write_dict(std::string& out, const Dict& dict, int depth) {
    if (dict.entries.empty()) {
      out += "{}";
      return;
    }
    std::vector<const std::pair<Value, Value>*> entries;
    for (const auto& entry : dict.entries) entries.push_back(&entry);
    if (options_.sort_keys) {
      // Python sorts the keys themselves (numbers numerically; str against int fails) before
      // writing them as strings.
      std::stable_sort(entries.begin(), entries.end(), [](const auto* a, const auto* b) {
        return order_values(a->first, b->first) < 0;
      });
    }
    out += '{';
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) out += options_.item_separator;
      if (options_.indent) newline(out, depth + 1);
      write_key(out, entries[i]->first);
      out += options_.key_separator;
      write(out, entries[i]->second, depth + 1);
      check_string_bytes(out.size(), "tojson result");
    }
    if (options_.indent) newline(out, depth);
    out += '}';
  }

  const JsonDumpOptions& options_;
};

}  // namespace

namespace {

Value convert_json(const nlohmann::ordered_json& json, int depth) {
  if (depth > kMaxJsonDepth)
    render_fail("JSON is nested more than ", kMaxJsonDepth, " levels deep");
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null:
      return Value::none();
    case nlohmann::ordered_json::value_t::boolean:
      return Value::boolean(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value::integer(json.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto value = json.get<uint64_t>();
      if (value > static_cast<uint64_t>(INT64_MAX))
        return Value::floating(static_cast<double>(value));
      return Value::integer(static_cast<int64_t>(value));
    }
    case nlohmann::ordered_json::value_t::number_float:
      return Value::floating(json.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value::string(json.get_ref<const std::string&>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(convert_json(item, depth + 1));
      return make_list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict dict;
      dict.entries.reserve(json.size());
      for (const auto& [key, item] : json.items()) {
        dict.entries.emplace_back(Value::string(key), convert_json(item, depth + 1));
      }
      return make_dict(std::move(dict));
    }
    default:
      return Value::none();  // binary and discarded values do not occur in parsed JSON
  }
}

}  // namespace

Value value_from_json(const nlohmann::ordered_json& json) {
  return convert_json(json, 0);
}

std::string python_json_dumps(const Value& value, const JsonDumpOptions& options) {
  std::string out;
  JsonWriter(options).write(out, value, 0);
  return out;
}

}  // namespace sluice::jinja
