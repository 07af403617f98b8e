#include "engine/template/template_globals.h"

#include <locale.h>
#include <algorithm>
#include <clocale>
#include <ctime>

#include "engine/template/call_args.h"
#include "engine/template/namespace_object.h"
#include "engine/template/render_fault.h"
#include "engine/template/render_state.h"
#include "engine/template/template_error.h"

namespace sluice::jinja {

namespace {

// Jinja2's sandbox refuses bigger ranges (MAX_RANGE).
constexpr int64_t kMaxRange = 100000;

using GlobalFn = Value (*)(RenderState& state, const CallArgs& args);

class BuiltinFunction final : public Object {
 public:
  BuiltinFunction(std::string_view name, GlobalFn fn) : name_(name), fn_(fn) {}

  std::string type_name() const override { return "function"; }
  std::string repr() const override { return "<function " + name_ + ">"; }
  bool is_callable() const override { return true; }
  Value call(RenderState& state, const CallArgs& args) const override { return fn_(state, args); }

 private:
  std::string name_;
  GlobalFn fn_;
};

Value raise_exception(RenderState&, const CallArgs& args) {
  const BoundArgs bound(args, {"message"}, 1, "raise_exception");
  // transformers raises jinja2's TemplateError(message): the message is all the user sees.
  throw TemplateError(to_str(bound.get(0)));
}

int64_t range_bound(const Value& value) {
  if (!value.is_int() && !value.is_bool()) {
    render_fail("'", type_name(value), "' object cannot be interpreted as an integer");
  }
  return value.as_int();
}

Value range(RenderState&, const CallArgs& args) {
  if (args.positional.empty() || args.positional.size() > 3 || !args.keyword.empty()) {
    render_fail("range expected 1 to 3 positional arguments, got ", args.positional.size());
  }
  const bool has_start = args.positional.size() > 1;
  const int64_t start = has_start ? range_bound(args.positional[0]) : 0;
  const int64_t stop = range_bound(args.positional[has_start ? 1 : 0]);
  const int64_t step = args.positional.size() == 3 ? range_bound(args.positional[2]) : 1;
  if (step == 0) render_fail("range() arg 3 must not be zero");
  // Unsigned: stop - start, and the step after the last item, can overflow int64_t.
  const bool is_empty = step > 0 ? start >= stop : start <= stop;
  const uint64_t span = step > 0 ? static_cast<uint64_t>(stop) - static_cast<uint64_t>(start)
                                 : static_cast<uint64_t>(start) - static_cast<uint64_t>(stop);
  const uint64_t stride = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  const uint64_t count = is_empty ? 0 : (span - 1) / stride + 1;
  if (count > static_cast<uint64_t>(kMaxRange)) {
    render_fail("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  }
  std::vector<Value> items;
  items.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    // Wraps modulo 2^64 to the exact value, which lies between start and stop.
    items.push_back(Value::integer(
        static_cast<int64_t>(static_cast<uint64_t>(start) + i * static_cast<uint64_t>(step))));
  }
  return make_list(std::move(items));
}

// dict(mapping_or_pairs, **kwargs), which namespace() also takes.
Dict build_dict(RenderState& state, const CallArgs& args, std::string_view function_name) {
  if (args.positional.size() > 1) {
    render_fail(function_name, " expected at most 1 positional argument, got ",
                args.positional.size());
  }
  Dict dict;
  if (!args.positional.empty()) {
    const Value& source = args.positional[0];
    if (source.is_dict()) {
      dict = source.as_dict();
    } else {
      const ListPtr pairs = iterate(source);
      for (const Value& pair : pairs->items) {
        // Any iterable of two items is a pair, as in Python: dict(['ab']) is {'a': 'b'}.
        const bool is_iterable = pair.is_list() || pair.is_string() || pair.is_dict();
        const ListPtr parts = is_iterable ? iterate(pair) : nullptr;
        if (!parts || parts->items.size() != 2) {
          render_fail(function_name, "() needs a mapping or a sequence of (key, value) pairs");
        }
        check_hashable(parts->items[0]);
        state.budget.spend_bytes(dict.entries.size() * kItemBytes);  // set() compares every key
        dict.set(parts->items[0], parts->items[1]);
      }
    }
  }
  for (const auto& [key, value] : args.keyword) dict.set(key, value);
  return dict;
}

Value namespace_function(RenderState& state, const CallArgs& args) {
  auto ns = std::make_shared<NamespaceObject>(build_dict(state, args, "namespace"));
  state.namespaces.push_back(ns);
  return Value::object(std::move(ns));
}

Value dict_function(RenderState& state, const CallArgs& args) {
  return make_dict(build_dict(state, args, "dict"));
}

Value strftime_now(RenderState& state, const CallArgs& args) {
  const BoundArgs bound(args, {"format"}, 1, "strftime_now");
  if (!bound.get(0).is_string()) render_fail("strftime_now() argument must be str");
  std::tm now{};
  if (state.fixed_now) {
    now = *state.fixed_now;
  } else {
    const std::time_t seconds = std::time(nullptr);
    localtime_r(&seconds, &now);
  }
  // The C locale, as Python's datetime.strftime uses, whatever locale the application set.
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
  const std::string& format = bound.get(0).as_string();
  // strftime_l returns 0 both when the text does not fit and when it is empty.
  const size_t max_capacity = std::min(256 * (format.size() + 16), kMaxStringBytes + 1);
  for (size_t capacity = 256;; capacity = std::min(capacity * 4, max_capacity)) {
    std::string out(capacity, '\0');
    const size_t length = strftime_l(out.data(), out.size(), format.c_str(), &now, c_locale);
    if (length > 0 || format.empty()) {
      out.resize(length);
      return Value::string(std::move(out));
    }
    if (capacity == kMaxStringBytes + 1) check_string_bytes(capacity, "strftime_now result");
    if (capacity == max_capacity) break;
  }
  return Value::string("");  // the format produces no characters (e.g. "%p" in some locales)
}

struct GlobalEntry {
  std::string_view name;
  Value value;
};

std::vector<GlobalEntry> make_globals() {
  const auto function = [](std::string_view name, GlobalFn fn) {
    return GlobalEntry{name, Value::object(std::make_shared<BuiltinFunction>(name, fn))};
  };
  return {function("raise_exception", raise_exception), function("range", range),
          function("namespace", namespace_function), function("dict", dict_function),
          function("strftime_now", strftime_now)};
}

}  // namespace

const Value* find_global(std::string_view name) {
  // Built once; the function objects are immutable, so every render (on any thread) shares them.
  static const std::vector<GlobalEntry> globals = make_globals();
  for (const GlobalEntry& entry : globals) {
    if (entry.name == name) return &entry.value;
  }
  return nullptr;
}

}  // namespace sluice::jinja
