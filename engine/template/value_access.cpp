#include "engine/template/value_access.h"

#include <algorithm>

#include "engine/template/call_args.h"
#include "engine/template/container_methods.h"
#include "engine/template/markup.h"
#include "engine/template/python_number.h"
#include "engine/template/python_string.h"
#include "engine/template/render_fault.h"
#include "engine/template/render_state.h"
#include "engine/template/string_methods.h"

namespace sluice::jinja {

namespace {

// A str / dict / list method read as an attribute (`text.strip`), callable later.
class BoundMethod final : public Object {
 public:
  BoundMethod(Value self, std::string_view name) : self_(std::move(self)), name_(name) {}

  std::string type_name() const override { return "builtin_function_or_method"; }
  std::string repr() const override {
    return str_cat("<built-in method ", name_, " of ", jinja::type_name(self_), " object>");
  }
  bool is_callable() const override { return true; }
  Value call(RenderState& state, const CallArgs& args) const override {
    if (self_.is_string()) {
      // str methods search (find, split, replace, strip(chars) ...): every byte of the text
      // against every byte of the longest argument, at worst.
      uint64_t longest_arg_bytes = 0;
      const auto note_arg = [&](const Value& arg) {
        if (arg.is_string()) longest_arg_bytes = std::max(longest_arg_bytes, value_bytes(arg));
      };
      for (const Value& arg : args.positional) note_arg(arg);
      for (const auto& [name, arg] : args.keyword) note_arg(arg);
      state.budget.spend_search(self_.as_string().size(), longest_arg_bytes);
      if (self_.is_markup()) return call_markup_method(self_, name_, args);
      return call_string_method(self_.as_string(), name_, args);
    }
    state.budget.spend_value(self_);
    if (self_.is_dict()) return call_dict_method(self_, name_, args);
    return call_list_method(self_, name_, args);
  }

 private:
  Value self_;
  std::string name_;
};

// Jinja2's object_type_repr: "None" for None, else "<type> object".
std::string object_type_repr(const Value& object) {
  return object.is_none() ? "None" : type_name(object) + " object";
}

Value missing_attribute(const Value& object, std::string_view name) {
  return Value::undefined(
      str_cat("'", object_type_repr(object), "' has no attribute '", name, "'"));
}

Value missing_element(const Value& object, const Value& key) {
  return Value::undefined(str_cat(object_type_repr(object), " has no element ", to_repr(key)));
}

// Returns the method object.name when the type has one, or nullopt.
std::optional<Value> find_method(const Value& object, std::string_view name) {
  if (const std::optional<std::string> refusal = unsafe_method_message(object, name)) {
    return Value::undefined(*refusal);
  }
  const bool has_method = (object.is_string() && is_string_method(name)) ||
                          (object.is_dict() && is_dict_method(name)) ||
                          (object.is_list() && is_list_method(name));
  if (!has_method) return std::nullopt;
  return Value::object(std::make_shared<BoundMethod>(object, name));
}

// Returns the index resolved against length (negative counts from the end), or nullopt when
// it is out of range.
std::optional<size_t> resolve_index(int64_t index, size_t length) {
  if (index < 0) index += static_cast<int64_t>(length);
  if (index < 0 || index >= static_cast<int64_t>(length)) return std::nullopt;
  return static_cast<size_t>(index);
}

std::optional<Value> string_element(const std::string& text, int64_t index) {
  if (index >= 0 && static_cast<size_t>(index) < text.size()) {
    // ASCII fast path: the byte index equals the character index when no earlier byte is
    // multi-byte.
    bool is_ascii_prefix = true;
    for (size_t i = 0; i <= static_cast<size_t>(index); ++i) {
      if (static_cast<unsigned char>(text[i]) >= 0x80) is_ascii_prefix = false;
    }
    if (is_ascii_prefix) return Value::string(std::string(1, text[static_cast<size_t>(index)]));
  }
  const std::u32string codepoints = to_codepoints(text);
  const std::optional<size_t> resolved = resolve_index(index, codepoints.size());
  if (!resolved) return std::nullopt;
  return Value::string(from_codepoints(std::u32string_view(codepoints).substr(*resolved, 1)));
}

}  // namespace

Value get_attribute(const Value& object, std::string_view name) {
  switch (object.kind()) {
    case ValueKind::Undefined:
      fail_undefined(object);
    case ValueKind::Object: {
      std::optional<Value> attribute = object.as_object().attribute(name);
      return attribute ? std::move(*attribute) : missing_attribute(object, name);
    }
    case ValueKind::Dict: {
      if (std::optional<Value> method = find_method(object, name)) return std::move(*method);
      const Value* found = object.as_dict().find(name);
      return found != nullptr ? *found : missing_attribute(object, name);
    }
    default: {
      if (std::optional<Value> method = find_method(object, name)) return std::move(*method);
      return missing_attribute(object, name);
    }
  }
}

Value get_item(const Value& object, const Value& key) {
  const bool is_integer_key = key.is_int() || key.is_bool();
  switch (object.kind()) {
    case ValueKind::Undefined:
      fail_undefined(object);
    case ValueKind::Dict:
      // An unhashable key finds nothing: Jinja2 turns Python's TypeError into undefined.
      if (const Value* found = object.as_dict().find(key)) return *found;
      break;
    case ValueKind::List:
      if (is_integer_key) {
        const auto& items = object.as_list().items;
        const std::optional<size_t> index = resolve_index(key.as_int(), items.size());
        return index ? items[*index] : missing_element(object, key);
      }
      break;
    case ValueKind::String:
      if (is_integer_key) {
        std::optional<Value> element = string_element(object.as_string(), key.as_int());
        if (!element) return missing_element(object, key);
        // Markup's __getitem__ returns Markup.
        return object.is_markup() ? Value::markup(element->string_ptr()) : std::move(*element);
      }
      break;
    default:
      break;
  }
  // Jinja2 falls back to the attribute of that name when the item is missing.
  if (key.is_string()) return get_attribute(object, key.as_string());
  return missing_element(object, key);
}

Value get_slice(const Value& object, std::optional<int64_t> start, std::optional<int64_t> stop,
                std::optional<int64_t> step) {
  if (object.is_undefined()) fail_undefined(object);
  const int64_t stride = step.value_or(1);
  if (stride == 0) render_fail("slice step cannot be zero");
  if (object.is_string()) {
    const std::u32string codepoints = to_codepoints(object.as_string());
    const auto length = static_cast<int64_t>(codepoints.size());
    const SliceRange range = python_slice_range(length, start, stop, stride);
    std::u32string picked;
    picked.reserve(static_cast<size_t>(range.count));
    for (int64_t i = 0; i < range.count; ++i) {
      picked += codepoints[static_cast<size_t>(range.first + i * range.step)];
    }
    return keep_markup(object, from_codepoints(picked));
  }
  if (object.is_list()) {
    const List& list = object.as_list();
    const auto length = static_cast<int64_t>(list.items.size());
    const SliceRange range = python_slice_range(length, start, stop, stride);
    std::vector<Value> picked;
    picked.reserve(static_cast<size_t>(range.count));
    for (int64_t i = 0; i < range.count; ++i) {
      picked.push_back(list.items[static_cast<size_t>(range.first + i * range.step)]);
    }
    return make_list(std::move(picked),
                     list.flavor == ListFlavor::Tuple ? ListFlavor::Tuple : ListFlavor::List);
  }
  render_fail("'", type_name(object), "' object is not subscriptable");
}

Value get_path(const Value& object, std::string_view path) {
  Value value = object;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string_view part = path.substr(start, dot - start);
    const bool is_digits =
        !part.empty() && part.find_first_not_of("0123456789") == std::string_view::npos;
    const std::optional<int64_t> index = is_digits ? python_parse_int(part, 10) : std::nullopt;
    value = get_item(value, index ? Value::integer(*index) : Value::string(std::string(part)));
    if (dot == std::string_view::npos) return value;
    start = dot + 1;
  }
}

}  // namespace sluice::jinja
