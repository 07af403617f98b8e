#include "engine/template/sequence_filters.h"

#include <algorithm>

#include "engine/template/call_args.h"
#include "engine/template/markup.h"
#include "engine/template/python_string.h"
#include "engine/template/render_fault.h"
#include "engine/template/render_state.h"
#include "engine/template/template_filters.h"
#include "engine/template/template_operators.h"
#include "engine/template/template_tests.h"
#include "engine/template/value_access.h"

namespace sluice::jinja {

namespace {

// Jinja2's make_attrgetter / make_multi_attrgetter: reads "a.b" (or "a,b" when is_multi)
// from an item, lower-casing strings when sorting ignores case.
class AttributeGetter {
 public:
  AttributeGetter(const BoundArgs& bound, size_t attribute_index, bool ignore_case, bool is_multi)
      : ignore_case_(ignore_case) {
    if (!bound.has(attribute_index) || bound.get(attribute_index).is_none()) return;
    const Value& attribute = bound.get(attribute_index);
    const std::string path = to_str(attribute);
    if (is_multi && attribute.is_string()) {
      paths_ = python_split(path, std::string(","), -1);
    } else {
      paths_.push_back(path);
    }
  }

  // Returns the key of item: the attribute(s) when given, else the item itself.
  Value key(const Value& item) const {
    if (paths_.size() > 1) {
      std::vector<Value> parts;
      for (const std::string& path : paths_) parts.push_back(postprocess(get_path(item, path)));
      return make_list(std::move(parts));
    }
    return postprocess(paths_.empty() ? item : get_path(item, paths_[0]));
  }

 private:
  Value postprocess(Value value) const {
    if (ignore_case_ && value.is_string()) return Value::string(python_lower(value.as_string()));
    return value;
  }

  std::vector<std::string> paths_;
  bool ignore_case_;
};

bool flag(const BoundArgs& bound, size_t index) {
  return bound.has(index) && is_truthy(bound.get(index));
}

// select / reject / selectattr / rejectattr: keeps the items whose test result equals keep.
Value select_or_reject(RenderState& state, const Value& input, const CallArgs& args, bool keep,
                       bool uses_attribute) {
  std::vector<Value> kept;
  if (!is_truthy(input)) return make_list(std::move(kept));
  const size_t test_index = uses_attribute ? 1 : 0;
  if (uses_attribute && args.positional.empty())
    render_fail("Missing parameter for attribute name");
  CallArgs test_args;
  if (args.positional.size() > test_index + 1) {
    test_args.positional.assign(args.positional.begin() + static_cast<long>(test_index) + 1,
                                args.positional.end());
  }
  test_args.keyword = args.keyword;
  const bool has_test = args.positional.size() > test_index;
  const std::string test_name = has_test ? to_str(args.positional[test_index]) : "";
  const ListPtr items = iterate(input);
  for (const Value& item : items->items) {
    const Value subject = uses_attribute ? get_path(item, to_str(args.positional[0])) : item;
    const bool passed =
        has_test ? apply_test(state, test_name, subject, test_args) : is_truthy(subject);
    if (passed == keep) kept.push_back(item);
  }
  return make_list(std::move(kept));
}

// min / max: the first item whose key is smallest (largest).
Value min_or_max(const Value& input, const CallArgs& args, bool want_max, std::string_view name) {
  const BoundArgs bound(args, {"case_sensitive", "attribute"}, 0, name);
  const AttributeGetter getter(bound, 1, !flag(bound, 0), false);
  const ListPtr items = iterate(input);
  if (items->items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  Value best_key = getter.key(items->items[0]);
  for (size_t i = 1; i < items->items.size(); ++i) {
    Value key = getter.key(items->items[i]);
    const int order = order_values(key, best_key);
    if (want_max ? order > 0 : order < 0) {
      best = i;
      best_key = std::move(key);
    }
  }
  return items->items[best];
}

void sort_by_key(std::vector<Value>& items, const std::vector<Value>& keys, bool reverse) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Stable in both directions, as Python's sorted(reverse=True) is.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return reverse ? order_values(keys[b], keys[a]) < 0 : order_values(keys[a], keys[b]) < 0;
  });
  std::vector<Value> sorted;
  sorted.reserve(items.size());
  for (const size_t i : order) sorted.push_back(items[i]);
  items = std::move(sorted);
}

}  // namespace

Value filter_length(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "length");
  return Value::integer(value_length(input));
}

Value filter_first(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "first");
  const ListPtr items = iterate(input);
  if (items->items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items->items.front();
}

Value filter_last(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "last");
  const ListPtr items = iterate(input);
  if (items->items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items->items.back();
}

Value filter_join(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"d", "attribute"}, 0, "join");
  const std::string separator = bound.has(0) ? to_str(bound.get(0)) : "";
  const AttributeGetter getter(bound, 1, false, false);
  std::string out;
  bool is_first = true;
  const ListPtr items = iterate(input);
  for (const Value& item : items->items) {
    if (!is_first) append_bounded(out, separator);
    append_str(out, getter.key(item));
    is_first = false;
  }
  return Value::string(std::move(out));
}

Value filter_list(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "list");
  const ListPtr items = iterate(input);
  return make_list(items->items);
}

Value filter_items(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "items");
  if (input.is_undefined()) return make_list({});
  if (!input.is_dict()) render_fail("Can only get item pairs from a mapping.");
  std::vector<Value> pairs;
  for (const auto& [key, value] : input.as_dict().entries) {
    pairs.push_back(make_list({key, value}, ListFlavor::Tuple));
  }
  return make_list(std::move(pairs));
}

Value filter_map(RenderState& state, const Value& input, const CallArgs& args) {
  const ListPtr items = iterate(input);
  std::vector<Value> mapped;
  if (args.positional.empty() && args.find_keyword("attribute") != nullptr) {
    const BoundArgs bound(args, {"attribute", "default"}, 1, "map");
    const std::string path = to_str(bound.get(0));
    for (const Value& item : items->items) {
      Value value = get_path(item, path);
      if (value.is_undefined() && bound.has(1) && !bound.get(1).is_none()) value = bound.get(1);
      mapped.push_back(std::move(value));
    }
    return make_list(std::move(mapped));
  }
  if (args.positional.empty()) render_fail("map requires a filter argument");
  const std::string filter_name = to_str(args.positional[0]);
  CallArgs filter_args;
  filter_args.positional.assign(args.positional.begin() + 1, args.positional.end());
  filter_args.keyword = args.keyword;
  for (const Value& item : items->items) {
    mapped.push_back(apply_filter(state, filter_name, item, filter_args));
  }
  return make_list(std::move(mapped));
}

Value filter_select(RenderState& state, const Value& input, const CallArgs& args) {
  return select_or_reject(state, input, args, true, false);
}

Value filter_reject(RenderState& state, const Value& input, const CallArgs& args) {
  return select_or_reject(state, input, args, false, false);
}

Value filter_selectattr(RenderState& state, const Value& input, const CallArgs& args) {
  return select_or_reject(state, input, args, true, true);
}

Value filter_rejectattr(RenderState& state, const Value& input, const CallArgs& args) {
  return select_or_reject(state, input, args, false, true);
}

Value filter_sort(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"reverse", "case_sensitive", "attribute"}, 0, "sort");
  const AttributeGetter getter(bound, 2, !flag(bound, 1), true);
  std::vector<Value> items = iterate(input)->items;
  std::vector<Value> keys;
  keys.reserve(items.size());
  for (const Value& item : items) keys.push_back(getter.key(item));
  sort_by_key(items, keys, flag(bound, 0));
  return make_list(std::move(items));
}

Value filter_dictsort(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"case_sensitive", "by", "reverse"}, 0, "dictsort");
  if (!input.is_dict()) render_fail("dictsort requires a mapping, not ", type_name(input));
  const std::string by = bound.has(1) ? to_str(bound.get(1)) : "key";
  if (by != "key" && by != "value") render_fail("You can only sort by either \"key\" or \"value\"");
  const bool ignore_case = !flag(bound, 0);
  std::vector<Value> pairs;
  std::vector<Value> keys;
  for (const auto& [key, value] : input.as_dict().entries) {
    pairs.push_back(make_list({key, value}, ListFlavor::Tuple));
    // Jinja2 lower-cases string keys only; numbers sort as numbers, mixed types fail as in Python.
    Value sort_key = by == "key" ? key : value;
    if (ignore_case && sort_key.is_string())
      sort_key = Value::string(python_lower(sort_key.as_string()));
    keys.push_back(std::move(sort_key));
  }
  sort_by_key(pairs, keys, flag(bound, 2));
  return make_list(std::move(pairs));
}

Value filter_unique(RenderState& state, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"case_sensitive", "attribute"}, 0, "unique");
  const AttributeGetter getter(bound, 1, !flag(bound, 0), false);
  std::vector<Value> kept;
  std::vector<Value> seen;
  const ListPtr items = iterate(input);
  for (const Value& item : items->items) {
    Value key = getter.key(item);
    // Compared with every key seen, each comparison reading at most this key.
    state.budget.spend_bytes(seen.size() * (kItemBytes + value_bytes(key)));
    const bool is_new = std::none_of(seen.begin(), seen.end(),
                                     [&](const Value& other) { return values_equal(other, key); });
    if (!is_new) continue;
    seen.push_back(std::move(key));
    kept.push_back(item);
  }
  return make_list(std::move(kept));
}

Value filter_reverse(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {}, 0, "reverse");
  if (input.is_string()) {
    std::u32string codepoints = to_codepoints(input.as_string());
    std::reverse(codepoints.begin(), codepoints.end());
    return keep_markup(input, from_codepoints(codepoints));  // markup[::-1] is markup
  }
  std::vector<Value> items = iterate(input)->items;
  std::reverse(items.begin(), items.end());
  return make_list(std::move(items));
}

Value filter_sum(RenderState& state, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"attribute", "start"}, 0, "sum");
  const AttributeGetter getter(bound, 0, false, false);
  Value total = bound.get_or(1, Value::integer(0));
  if (total.is_string()) render_fail("sum() can't sum strings [use ''.join(seq) instead]");
  const ListPtr items = iterate(input);
  for (const Value& item : items->items) {
    total = binary_operation(BinaryOp::Add, total, getter.key(item));
    state.budget.spend_value(total);  // adding lists copies the total so far
  }
  return total;
}

Value filter_min(RenderState&, const Value& input, const CallArgs& args) {
  return min_or_max(input, args, false, "min");
}

Value filter_max(RenderState&, const Value& input, const CallArgs& args) {
  return min_or_max(input, args, true, "max");
}

Value filter_batch(RenderState&, const Value& input, const CallArgs& args) {
  const BoundArgs bound(args, {"linecount", "fill_with"}, 1, "batch");
  if (!bound.get(0).is_int() || bound.get(0).as_int() <= 0) {
    render_fail("batch linecount must be a positive integer");
  }
  const auto size = static_cast<size_t>(bound.get(0).as_int());
  std::vector<Value> batches;
  std::vector<Value> current;
  const ListPtr items = iterate(input);
  for (const Value& item : items->items) {
    current.push_back(item);
    if (current.size() == size) batches.push_back(make_list(std::exchange(current, {})));
  }
  if (!current.empty()) {
    if (bound.has(1) && !bound.get(1).is_none()) {
      check_list_items(size, "batch");  // filled up to linecount, which the template chose
      current.resize(size, bound.get(1));
    }
    batches.push_back(make_list(std::move(current)));
  }
  return make_list(std::move(batches));
}

}  // namespace sluice::jinja
