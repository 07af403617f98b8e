#include "engine/template/container_methods.h"

#include <algorithm>
#include <array>

#include "engine/template/render_fault.h"

namespace sluice::jinja {

namespace {

constexpr std::array<std::string_view, 5> kDictMethods{"get", "items", "keys", "values", "copy"};
constexpr std::array<std::string_view, 3> kListMethods{"index", "count", "copy"};
constexpr std::array<std::string_view, 6> kUnsafeDictMethods{"clear",      "pop",    "popitem",
                                                             "setdefault", "update", "fromkeys"};
constexpr std::array<std::string_view, 8> kUnsafeListMethods{
    "append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"};

template <size_t N>
bool contains_name(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

Value dict_items(const Dict& dict) {
  std::vector<Value> items;
  items.reserve(dict.entries.size());
  for (const auto& [key, value] : dict.entries) {
    items.push_back(make_list({key, value}, ListFlavor::Tuple));
  }
  return make_list(std::move(items), ListFlavor::DictItems);
}

}  // namespace

bool is_dict_method(std::string_view name) {
  return contains_name(kDictMethods, name);
}

bool is_list_method(std::string_view name) {
  return contains_name(kListMethods, name);
}

std::optional<std::string> unsafe_method_message(const Value& value, std::string_view name) {
  const bool is_plain_list = value.is_list() && value.as_list().flavor == ListFlavor::List;
  if ((value.is_dict() && contains_name(kUnsafeDictMethods, name)) ||
      (is_plain_list && contains_name(kUnsafeListMethods, name))) {
    return str_cat("access to attribute '", name, "' of '", type_name(value),
                   "' object is unsafe.");
  }
  return std::nullopt;
}

Value call_dict_method(const Value& self, std::string_view name, const CallArgs& args) {
  const Dict& dict = self.as_dict();
  if (name == "get") {
    const BoundArgs bound(args, {"key", "default"}, 1, name);
    const Value& key = bound.get(0);
    check_hashable(key);
    const Value* found = dict.find(key);
    return found != nullptr ? *found : bound.get_or(1, Value::none());
  }
  const BoundArgs no_args(args, {}, 0, name);
  if (name == "items") return dict_items(dict);
  if (name == "copy") return self;  // values are immutable, so a copy may share
  std::vector<Value> items;
  items.reserve(dict.entries.size());
  for (const auto& [key, value] : dict.entries) {
    items.push_back(name == "keys" ? key : value);
  }
  return make_list(std::move(items),
                   name == "keys" ? ListFlavor::DictKeys : ListFlavor::DictValues);
}

Value call_list_method(const Value& self, std::string_view name, const CallArgs& args) {
  const List& list = self.as_list();
  if (name == "copy") {
    const BoundArgs no_args(args, {}, 0, name);
    return make_list(list.items);
  }
  const BoundArgs bound(args, {"value"}, 1, name);
  int64_t count = 0;
  for (size_t i = 0; i < list.items.size(); ++i) {
    if (!values_equal(list.items[i], bound.get(0))) continue;
    if (name == "index") return Value::integer(static_cast<int64_t>(i));
    ++count;
  }
  if (name == "index") render_fail(to_repr(bound.get(0)), " is not in list");
  return Value::integer(count);
}

}  // namespace sluice::jinja
