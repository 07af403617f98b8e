#include "engine/template/template_value.h"

#include <algorithm>
#include <cassert>

#include "engine/template/python_number.h"
#include "engine/template/python_string.h"
#include "engine/template/render_fault.h"
#include "engine/tokenizer/unicode.h"

namespace sluice::jinja {

namespace {

// Returns how deep lists and dicts nest in value (0 for other values); fails past the limit.
uint32_t nested_depth(const Value& value) {
  const uint32_t depth = value.is_list()   ? value.as_list().depth
                         : value.is_dict() ? value.as_dict().depth
                                           : 0;
  if (depth >= kMaxValueDepth)
    render_fail("values are nested more than ", kMaxValueDepth, " levels deep");
  return depth;
}

// Counts nested repr calls on this thread: namespaces can contain themselves, which Python
// prints with a recursion guard and this interpreter refuses.
thread_local int repr_depth = 0;

class ReprDepthGuard {
 public:
  ReprDepthGuard() {
    if (++repr_depth > static_cast<int>(kMaxValueDepth)) {
      repr_depth = 0;
      render_fail("maximum recursion depth exceeded while printing a value");
    }
  }
  ~ReprDepthGuard() { repr_depth = std::max(repr_depth - 1, 0); }
  ReprDepthGuard(const ReprDepthGuard&) = delete;
  ReprDepthGuard& operator=(const ReprDepthGuard&) = delete;
};

uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

const std::string& generic_undefined_message() {
  static const std::string message = "value is undefined";
  return message;
}

void append_list_repr(std::string& out, const List& list) {
  const ReprDepthGuard guard;
  const bool is_tuple = list.flavor == ListFlavor::Tuple;
  switch (list.flavor) {
    case ListFlavor::DictKeys:
      out += "dict_keys(";
      break;
    case ListFlavor::DictValues:
      out += "dict_values(";
      break;
    case ListFlavor::DictItems:
      out += "dict_items(";
      break;
    default:
      break;
  }
  out += is_tuple ? '(' : '[';
  for (size_t i = 0; i < list.items.size(); ++i) {
    if (i > 0) out += ", ";
    const Value& item = list.items[i];
    // A string's repr is at least as long as its text: refuse before writing it.
    if (item.is_string()) check_string_bytes(out.size() + item.as_string().size(), "string result");
    append_bounded(out, to_repr(item));
  }
  if (is_tuple && list.items.size() == 1) out += ',';
  out += is_tuple ? ')' : ']';
  if (list.flavor != ListFlavor::List && !is_tuple) out += ')';
}

void append_dict_repr(std::string& out, const Dict& dict) {
  const ReprDepthGuard guard;
  out += '{';
  for (size_t i = 0; i < dict.entries.size(); ++i) {
    if (i > 0) out += ", ";
    append_bounded(out, to_repr(dict.entries[i].first));
    out += ": ";
    append_bounded(out, to_repr(dict.entries[i].second));
  }
  out += '}';
}

bool lists_equal(const List& a, const List& b) {
  if (a.items.size() != b.items.size()) return false;
  // Python never finds a list equal to a tuple.
  if ((a.flavor == ListFlavor::Tuple) != (b.flavor == ListFlavor::Tuple)) return false;
  for (size_t i = 0; i < a.items.size(); ++i) {
    if (!values_equal(a.items[i], b.items[i])) return false;
  }
  return true;
}

bool dicts_equal(const Dict& a, const Dict& b) {
  if (a.entries.size() != b.entries.size()) return false;
  for (const auto& [key, value] : a.entries) {
    const Value* other = b.find(key);
    if (other == nullptr || !values_equal(value, *other)) return false;
  }
  return true;
}

}  // namespace

Value Value::undefined(std::string message) {
  return Value(UndefinedTag{std::make_shared<const std::string>(std::move(message))});
}

Value Value::string(std::string text) {
  check_string_bytes(text.size(), "string");
  return Value(std::make_shared<const std::string>(std::move(text)));
}

Value Value::markup(std::string text) {
  return markup(string(std::move(text)).string_ptr());
}

Value Value::markup(StringPtr text) {
  return Value(MarkupText{std::move(text)});
}

static_assert(sizeof(Value) <= 24, "a Value is a pointer and a tag: lists hold many");

double Value::as_float() const {
  if (is_float()) return std::get<double>(data_);
  return static_cast<double>(as_int());
}

const std::string& Value::undefined_message() const {
  const auto& message = std::get<UndefinedTag>(data_).message;
  return message ? *message : generic_undefined_message();
}

const Value* Dict::find(std::string_view key) const {
  for (const auto& entry : entries) {
    if (entry.first.is_string() && entry.first.as_string() == key) return &entry.second;
  }
  return nullptr;
}

const Value* Dict::find(const Value& key) const {
  if (key.is_string()) return find(std::string_view(key.as_string()));
  // values_equal is Python's == on hashable values, which is how a dict matches keys once
  // their hashes agree: 1 == 1.0 == True share a hash in Python too. Unhashable keys match
  // nothing stored (a list never equals a tuple).
  for (const auto& entry : entries) {
    if (values_equal(entry.first, key)) return &entry.second;
  }
  return nullptr;
}

void Dict::set(Value key, Value value) {
  assert(is_hashable(key) && "callers check keys with check_hashable");
  for (auto& entry : entries) {
    if (values_equal(entry.first, key)) {
      entry.second = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::move(key), std::move(value));
}

std::optional<Value> Object::attribute(std::string_view) const {
  return std::nullopt;
}

Value Object::call(RenderState&, const CallArgs&) const {
  render_fail("'", type_name(), "' object is not callable");
}

uint64_t value_bytes(const Value& value) {
  switch (value.kind()) {
    case ValueKind::String:
      return value.as_string().size();
    case ValueKind::List:
      return value.as_list().nested_bytes;
    case ValueKind::Dict:
      return value.as_dict().nested_bytes;
    default:
      return 0;
  }
}

void check_string_bytes(uint64_t num_bytes, std::string_view what) {
  if (num_bytes > kMaxStringBytes) {
    render_fail(what, " is too large (", num_bytes, " bytes; the limit is ", kMaxStringBytes, ")");
  }
}

void append_bounded(std::string& out, std::string_view text) {
  check_string_bytes(uint64_t{out.size()} + text.size(), "string result");
  out += text;
}

void check_list_items(uint64_t num_items, std::string_view what) {
  if (num_items > kMaxListItems) {
    render_fail(what, " is too large (", num_items, " items; the limit is ", kMaxListItems, ")");
  }
}

Value concat_strings(std::string_view a, std::string_view b) {
  check_string_bytes(uint64_t{a.size()} + b.size(), "string result");
  std::string text;
  text.reserve(a.size() + b.size());
  text.append(a).append(b);
  return Value::string(std::move(text));
}

Value make_list(std::vector<Value> items, ListFlavor flavor) {
  check_list_items(items.size(), "list");
  uint32_t depth = 1;
  uint64_t nested_bytes = 0;
  for (const Value& item : items) {
    depth = std::max(depth, nested_depth(item) + 1);
    nested_bytes = saturating_add(nested_bytes, saturating_add(kItemBytes, value_bytes(item)));
  }
  return Value::list(
      std::make_shared<const List>(List{std::move(items), flavor, depth, nested_bytes}));
}

Value make_dict(Dict dict) {
  dict.depth = 1;
  dict.nested_bytes = 0;
  for (const auto& [key, value] : dict.entries) {
    dict.depth = std::max({dict.depth, nested_depth(key) + 1, nested_depth(value) + 1});
    const uint64_t entry_bytes =
        saturating_add(saturating_add(kItemBytes, value_bytes(key)), value_bytes(value));
    dict.nested_bytes = saturating_add(dict.nested_bytes, entry_bytes);
  }
  return Value::dict(std::make_shared<const Dict>(std::move(dict)));
}

bool is_truthy(const Value& value) {
  switch (value.kind()) {
    case ValueKind::Undefined:
    case ValueKind::None:
      return false;
    case ValueKind::Bool:
      return value.as_bool();
    case ValueKind::Int:
      return value.as_int() != 0;
    case ValueKind::Float:
      return value.as_float() != 0.0;
    case ValueKind::String:
      return !value.as_string().empty();
    case ValueKind::List:
      return !value.as_list().items.empty();
    case ValueKind::Dict:
      return !value.as_dict().entries.empty();
    case ValueKind::Object:
      return true;
  }
  return false;
}

bool values_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_float() == b.as_float();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ValueKind::Undefined:
    case ValueKind::None:
      return true;
    case ValueKind::String:
      return a.as_string() == b.as_string();
    case ValueKind::List:
      return lists_equal(a.as_list(), b.as_list());
    case ValueKind::Dict:
      return dicts_equal(a.as_dict(), b.as_dict());
    case ValueKind::Object:
      return a.object_ptr() == b.object_ptr();
    default:
      return false;  // numbers were handled above
  }
}

bool is_hashable(const Value& value) {
  if (value.is_dict()) return false;
  if (!value.is_list()) return true;
  const List& list = value.as_list();
  if (list.flavor != ListFlavor::Tuple) return false;
  return std::all_of(list.items.begin(), list.items.end(),
                     [](const Value& item) { return is_hashable(item); });
}

void check_hashable(const Value& value) {
  if (is_hashable(value)) return;
  if (value.is_list() && value.as_list().flavor == ListFlavor::Tuple) {
    // Python names the unhashable item, not the tuple.
    for (const Value& item : value.as_list().items) check_hashable(item);
  }
  render_fail("unhashable type: '", type_name(value), "'");
}

void append_str(std::string& out, const Value& value) {
  switch (value.kind()) {
    case ValueKind::Undefined:
      return;
    case ValueKind::None:
      out += "None";
      return;
    case ValueKind::Bool:
      out += value.as_bool() ? "True" : "False";
      return;
    case ValueKind::Int:
      out += std::to_string(value.as_int());
      return;
    case ValueKind::Float:
      out += python_float_repr(value.as_float());
      return;
    case ValueKind::String:
      append_bounded(out, value.as_string());
      return;
    case ValueKind::List:
      append_list_repr(out, value.as_list());
      return;
    case ValueKind::Dict:
      append_dict_repr(out, value.as_dict());
      return;
    case ValueKind::Object:
      out += value.as_object().repr();
      return;
  }
}

std::string to_str(const Value& value) {
  if (value.is_string()) return value.as_string();
  std::string out;
  append_str(out, value);
  return out;
}

std::string to_repr(const Value& value) {
  if (value.is_markup()) return str_cat("Markup(", python_string_repr(value.as_string()), ")");
  if (value.is_string()) return python_string_repr(value.as_string());
  if (value.is_undefined()) return "Undefined";
  return to_str(value);
}

std::string type_name(const Value& value) {
  switch (value.kind()) {
    case ValueKind::Undefined:
      return "Undefined";
    case ValueKind::None:
      return "NoneType";
    case ValueKind::Bool:
      return "bool";
    case ValueKind::Int:
      return "int";
    case ValueKind::Float:
      return "float";
    case ValueKind::String:
      return value.is_markup() ? "Markup" : "str";
    case ValueKind::List:
      switch (value.as_list().flavor) {
        case ListFlavor::Tuple:
          return "tuple";
        case ListFlavor::DictKeys:
          return "dict_keys";
        case ListFlavor::DictValues:
          return "dict_values";
        case ListFlavor::DictItems:
          return "dict_items";
        default:
          return "list";
      }
    case ValueKind::Dict:
      return "dict";
    case ValueKind::Object:
      return value.as_object().type_name();
  }
  return "object";
}

void fail_undefined(const Value& value) {
  throw RenderFault(value.undefined_message());
}

ListPtr iterate(const Value& value) {
  switch (value.kind()) {
    case ValueKind::List:
      return value.list_ptr();
    case ValueKind::Undefined:
      return std::make_shared<const List>();
    case ValueKind::Dict: {
      std::vector<Value> keys;
      keys.reserve(value.as_dict().entries.size());
      for (const auto& entry : value.as_dict().entries) keys.push_back(entry.first);
      const Value list = make_list(std::move(keys));
      return list.list_ptr();
    }
    case ValueKind::String: {
      check_list_items(count_codepoints(value.as_string()), "the string's list of characters");
      std::vector<Value> chars;
      for (const char32_t c : to_codepoints(value.as_string())) {
        chars.push_back(Value::string(utf8_encode(c)));
      }
      const Value list = make_list(std::move(chars));
      return list.list_ptr();
    }
    default:
      render_fail("'", type_name(value), "' object is not iterable");
  }
}

int64_t value_length(const Value& value) {
  switch (value.kind()) {
    case ValueKind::Undefined:
      return 0;
    case ValueKind::String:
      return static_cast<int64_t>(count_codepoints(value.as_string()));
    case ValueKind::List:
      return static_cast<int64_t>(value.as_list().items.size());
    case ValueKind::Dict:
      return static_cast<int64_t>(value.as_dict().entries.size());
    default:
      render_fail("object of type '", type_name(value), "' has no len()");
  }
}

}  // namespace sluice::jinja
