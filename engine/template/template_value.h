// Values of the template interpreter: the part of Python's object model that chat templates
// see. Lists and dicts are immutable and shared: transformers renders in Jinja2's immutable
// sandbox, so a template can never change them, and copying a Value costs at most a reference
// count (a row's messages are looked up many times per render). Only Namespace objects change,
// through `{% set ns.attr = ... %}`. An undefined value carries the message Jinja2 raises when
// it is used where a real value is needed ("'foo' is undefined"). A string may be markup
// (markupsafe.Markup, what `|safe` and `|escape` return): still a str to every operation that
// reads it, but `+`, `%` and some methods escape the plain strings they combine with it
// (markup.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace sluice::jinja {

class Object;
struct List;
struct Dict;
struct CallArgs;
struct RenderState;

using StringPtr = std::shared_ptr<const std::string>;
using ListPtr = std::shared_ptr<const List>;
using DictPtr = std::shared_ptr<const Dict>;
using ObjectPtr = std::shared_ptr<Object>;

// The order matches Value's variant alternatives (markup, a last alternative, is a String).
enum class ValueKind : uint8_t { Undefined, None, Bool, Int, Float, String, List, Dict, Object };

class Value {
 public:
  // An undefined value with a generic message.
  Value() = default;

  // An undefined value whose use raises `message`.
  static Value undefined(std::string message);
  static Value none() { return Value(NoneTag{}); }
  static Value boolean(bool value) { return Value(value); }
  static Value integer(int64_t value) { return Value(value); }
  static Value floating(double value) { return Value(value); }
  // Throws RenderFault when text is longer than kMaxStringBytes.
  static Value string(std::string text);
  static Value string(StringPtr text) { return Value(std::move(text)); }
  // A markupsafe.Markup string: text that is already HTML. Throws RenderFault as string() does.
  static Value markup(std::string text);
  static Value markup(StringPtr text);
  static Value list(ListPtr list) { return Value(std::move(list)); }
  static Value dict(DictPtr dict) { return Value(std::move(dict)); }
  static Value object(ObjectPtr object) { return Value(std::move(object)); }

  ValueKind kind() const {
    const size_t index = data_.index();
    return index == kMarkupIndex ? ValueKind::String : static_cast<ValueKind>(index);
  }
  bool is_undefined() const { return kind() == ValueKind::Undefined; }
  bool is_none() const { return kind() == ValueKind::None; }
  bool is_bool() const { return kind() == ValueKind::Bool; }
  bool is_int() const { return kind() == ValueKind::Int; }
  bool is_float() const { return kind() == ValueKind::Float; }
  // Python numbers: int, float and bool (a bool is an int in Python).
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  bool is_string() const { return kind() == ValueKind::String; }
  // A Markup string (is_string() is true too).
  bool is_markup() const { return data_.index() == kMarkupIndex; }
  bool is_list() const { return kind() == ValueKind::List; }
  bool is_dict() const { return kind() == ValueKind::Dict; }
  bool is_object() const { return kind() == ValueKind::Object; }

  bool as_bool() const { return std::get<bool>(data_); }
  // Precondition: is_int() or is_bool().
  int64_t as_int() const {
    return is_bool() ? static_cast<int64_t>(as_bool()) : std::get<int64_t>(data_);
  }
  // Precondition: is_number().
  double as_float() const;
  const std::string& as_string() const { return *string_ptr(); }
  const StringPtr& string_ptr() const {
    return is_markup() ? std::get<MarkupText>(data_).text : std::get<StringPtr>(data_);
  }
  const List& as_list() const { return *std::get<ListPtr>(data_); }
  const ListPtr& list_ptr() const { return std::get<ListPtr>(data_); }
  const Dict& as_dict() const { return *std::get<DictPtr>(data_); }
  Object& as_object() const { return *std::get<ObjectPtr>(data_); }
  const ObjectPtr& object_ptr() const { return std::get<ObjectPtr>(data_); }
  // The message raised when this undefined value is used. Precondition: is_undefined().
  const std::string& undefined_message() const;

 private:
  struct UndefinedTag {
    std::shared_ptr<const std::string> message;
  };
  struct NoneTag {};
  // A markup string: an alternative of its own rather than a flag beside the variant, which
  // would make every Value (and every list item) 8 bytes bigger.
  struct MarkupText {
    StringPtr text;
  };
  static constexpr size_t kMarkupIndex = 9;

  template <typename T>
  explicit Value(T value) : data_(std::move(value)) {}

  std::variant<UndefinedTag, NoneTag, bool, int64_t, double, StringPtr, ListPtr, DictPtr, ObjectPtr,
               MarkupText>
      data_;
};

// How a list prints: Python shows tuples and dict views differently from lists.
enum class ListFlavor : uint8_t { List, Tuple, DictKeys, DictValues, DictItems };

struct List {
  std::vector<Value> items;
  ListFlavor flavor = ListFlavor::List;
  uint32_t depth = 1;         // lists and dicts nested in it, plus one (set by make_list)
  uint64_t nested_bytes = 0;  // value_bytes of the list (set by make_list)
};

// An insertion-ordered dict. Keys are any hashable value, compared as Python compares dict keys
// (1, 1.0 and True are one key, '1' another): JSON and chat messages use strings, templates
// also build dicts keyed by numbers ({0: 0, 512: 128}). Lookup is linear: chat messages and
// tool schemas have a handful of keys.
struct Dict {
  std::vector<std::pair<Value, Value>> entries;
  uint32_t depth = 1;         // lists and dicts nested in it, plus one (set by make_dict)
  uint64_t nested_bytes = 0;  // value_bytes of the dict, keys included (set by make_dict)

  // Returns the value under the string key, or nullptr (attributes, variables: never a number).
  const Value* find(std::string_view key) const;
  // Returns the value under key, or nullptr. An unhashable key finds nothing.
  const Value* find(const Value& key) const;
  // Sets key to value; an existing key keeps its position and its first spelling (setting 1.0
  // where 1 is leaves the key 1), as in Python. Precondition: is_hashable(key).
  void set(Value key, Value value);
  void set(std::string key, Value value) { set(Value::string(std::move(key)), std::move(value)); }
};

// Objects with behaviour: namespaces, loop state, functions, macros, bound methods.
class Object {
 public:
  virtual ~Object() = default;
  // Returns the Python-facing type name ("Namespace", "LoopContext", "function").
  virtual std::string type_name() const = 0;
  // Returns str(self).
  virtual std::string repr() const = 0;
  // Returns the attribute `name`, or nullopt when there is none.
  virtual std::optional<Value> attribute(std::string_view name) const;
  virtual bool is_callable() const { return false; }
  // Calls the object; the default throws RenderFault ("'X' object is not callable").
  virtual Value call(RenderState& state, const CallArgs& args) const;
};

// Lists and dicts nest at most this deep, so that printing, comparing and freeing them never
// recurses far enough to overflow the stack.
inline constexpr uint32_t kMaxValueDepth = 1000;

// Strings (and the output) grow at most this big: a template that doubles a string in a loop
// fails instead of exhausting memory. 64 MiB is more text than any model's context holds, and
// keeps the transient copies an operation makes (4 bytes a character when decoded) modest.
inline constexpr size_t kMaxStringBytes = size_t{1} << 26;

// Lists hold at most this many items (a string's characters, split parts, repetitions).
inline constexpr size_t kMaxListItems = size_t{1} << 22;

// What value_bytes counts for each item of a list or entry of a dict, besides its contents.
inline constexpr uint64_t kItemBytes = sizeof(Value);

// Returns the bytes of value and of everything nested in it: a string's text, and for lists and
// dicts kItemBytes per item plus the items' (and keys') own bytes, a part shared several times
// counted each time, as printing or comparing visits it. Numbers and objects count 0. Saturates
// instead of overflowing. This is what the render budget charges for using a value.
uint64_t value_bytes(const Value& value);

// Throws RenderFault when a string of num_bytes would be longer than kMaxStringBytes; what
// names the result ("string repetition result").
void check_string_bytes(uint64_t num_bytes, std::string_view what);

// Appends text to out; throws RenderFault, before growing out, when out would be longer than
// kMaxStringBytes.
void append_bounded(std::string& out, std::string_view text);

// Throws RenderFault when a list of num_items would hold more than kMaxListItems.
void check_list_items(uint64_t num_items, std::string_view what);

// Returns a + b as a string value. Throws RenderFault, before allocating, when the result
// would be longer than kMaxStringBytes.
Value concat_strings(std::string_view a, std::string_view b);

// Returns a list value that owns items. Throws RenderFault past kMaxValueDepth or
// kMaxListItems.
Value make_list(std::vector<Value> items, ListFlavor flavor = ListFlavor::List);

// Returns a dict value that owns dict. Throws RenderFault past kMaxValueDepth.
Value make_dict(Dict dict);

// Python truthiness: None, undefined, 0, 0.0, "", [] and {} are false.
bool is_truthy(const Value& value);

// Python ==, with Jinja2's rule that undefined equals only undefined.
bool values_equal(const Value& a, const Value& b);

// Whether value can be a dict key in Python: not a list, dict or dict view, nor a tuple holding
// one. Undefined is (Jinja2's Undefined hashes), and so are objects (by identity).
bool is_hashable(const Value& value);

// Throws RenderFault "unhashable type: 'list'" when value cannot be a dict key.
void check_hashable(const Value& value);

// Appends str(value) to out: strings as they are, undefined as nothing, others as Python prints.
// Throws RenderFault when out would grow past kMaxStringBytes.
void append_str(std::string& out, const Value& value);

// Returns str(value).
std::string to_str(const Value& value);

// Returns repr(value): strings quoted, as inside a printed list; markup as Markup('...').
std::string to_repr(const Value& value);

// Returns the Python type name of value ("str", "Markup", "int", "dict", "NoneType", ...).
std::string type_name(const Value& value);

// Throws the error Jinja2 raises when an undefined value is used. Precondition: is_undefined().
[[noreturn]] void fail_undefined(const Value& value);

// Returns the items iterating value yields: a list's items, a dict's keys, a string's
// characters, nothing for undefined. Throws RenderFault for values that are not iterable.
// For a string or a dict the list is made for the call, so hold the pointer while using the
// items: `for (x : iterate(v)->items)` reads a list freed before the loop starts.
ListPtr iterate(const Value& value);

// Python len(value); undefined has length 0. Throws RenderFault when value has no length.
int64_t value_length(const Value& value);

}  // namespace sluice::jinja
