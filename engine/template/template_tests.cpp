#include "engine/template/template_tests.h"

#include <array>

#include "engine/template/call_args.h"
#include "engine/template/python_string.h"
#include "engine/template/render_fault.h"
#include "engine/template/render_state.h"
#include "engine/template/template_filters.h"
#include "engine/template/template_operators.h"

namespace sluice::jinja {

namespace {

// Runs a one-argument test; fails like Python when the argument is missing or extra.
const Value& single_argument(const CallArgs& args, std::string_view test) {
  if (args.positional.size() != 1 || !args.keyword.empty()) {
    render_fail("test '", test, "' takes exactly one argument");
  }
  return args.positional[0];
}

void no_arguments(const CallArgs& args, std::string_view test) {
  if (!args.positional.empty() || !args.keyword.empty()) {
    render_fail("test '", test, "' takes no arguments");
  }
}

bool test_defined(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "defined");
  return !v.is_undefined();
}
bool test_undefined(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "undefined");
  return v.is_undefined();
}
bool test_none(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "none");
  return v.is_none();
}
bool test_boolean(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "boolean");
  return v.is_bool();
}
bool test_true(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "true");
  return v.is_bool() && v.as_bool();
}
bool test_false(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "false");
  return v.is_bool() && !v.as_bool();
}
bool test_integer(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "integer");
  return v.is_int();
}
bool test_float(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "float");
  return v.is_float();
}
bool test_number(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "number");
  return v.is_number();
}
bool test_string(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "string");
  return v.is_string();
}
bool test_mapping(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "mapping");
  return v.is_dict();
}
// Strings, lists, dicts and undefined (which iterates as empty) are iterable sequences.
bool test_iterable(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "iterable");
  return v.is_string() || v.is_list() || v.is_dict() || v.is_undefined();
}
bool test_sequence(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "sequence");
  return v.is_string() || v.is_list() || v.is_dict() || v.is_undefined();
}
bool test_callable(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "callable");
  return v.is_object() && v.as_object().is_callable();
}
bool test_lower(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "lower");
  return python_is_lower(to_str(v));
}
bool test_upper(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "upper");
  return python_is_upper(to_str(v));
}
bool test_escaped(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "escaped");
  return v.is_markup();  // has __html__: only Markup (|safe, |escape)
}
bool test_even(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "even");
  return values_equal(binary_operation(BinaryOp::Modulo, v, Value::integer(2)), Value::integer(0));
}
bool test_odd(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "odd");
  return values_equal(binary_operation(BinaryOp::Modulo, v, Value::integer(2)), Value::integer(1));
}
bool test_divisibleby(RenderState&, const Value& v, const CallArgs& a) {
  const Value& divisor = single_argument(a, "divisibleby");
  return values_equal(binary_operation(BinaryOp::Modulo, v, divisor), Value::integer(0));
}
bool test_in(RenderState& state, const Value& v, const CallArgs& a) {
  const Value& container = single_argument(a, "in");
  if (container.is_string() && v.is_string()) {
    state.budget.spend_search(container.as_string().size(), v.as_string().size());
  }
  return contains(container, v);
}
bool test_sameas(RenderState&, const Value& v, const CallArgs& a) {
  const Value& other = single_argument(a, "sameas");
  if (v.kind() != other.kind()) return false;
  switch (v.kind()) {
    case ValueKind::String:
      return v.string_ptr() == other.string_ptr();
    case ValueKind::List:
      return v.list_ptr() == other.list_ptr();
    case ValueKind::Dict:
      return &v.as_dict() == &other.as_dict();
    default:
      return values_equal(v, other);  // None, booleans, small numbers are singletons
  }
}
bool test_filter(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "filter");
  return v.is_string() && find_filter(v.as_string()) != nullptr;
}
bool test_test(RenderState&, const Value& v, const CallArgs& a) {
  no_arguments(a, "test");
  return v.is_string() && find_test(v.as_string()) != nullptr;
}

template <CompareOp kOp>
bool test_compare(RenderState&, const Value& v, const CallArgs& a) {
  return compare_values(kOp, v, single_argument(a, "comparison"));
}

struct TestEntry {
  std::string_view name;
  TestFn fn;
};

constexpr std::array<TestEntry, 39> kTests{{
    {"defined", test_defined},
    {"undefined", test_undefined},
    {"none", test_none},
    {"boolean", test_boolean},
    {"true", test_true},
    {"false", test_false},
    {"integer", test_integer},
    {"float", test_float},
    {"number", test_number},
    {"string", test_string},
    {"mapping", test_mapping},
    {"iterable", test_iterable},
    {"sequence", test_sequence},
    {"callable", test_callable},
    {"lower", test_lower},
    {"upper", test_upper},
    {"escaped", test_escaped},
    {"even", test_even},
    {"odd", test_odd},
    {"divisibleby", test_divisibleby},
    {"in", test_in},
    {"sameas", test_sameas},
    {"filter", test_filter},
    {"test", test_test},
    {"eq", test_compare<CompareOp::Equal>},
    {"equalto", test_compare<CompareOp::Equal>},
    {"==", test_compare<CompareOp::Equal>},
    {"ne", test_compare<CompareOp::NotEqual>},
    {"!=", test_compare<CompareOp::NotEqual>},
    {"lt", test_compare<CompareOp::Less>},
    {"lessthan", test_compare<CompareOp::Less>},
    {"<", test_compare<CompareOp::Less>},
    {"le", test_compare<CompareOp::LessEqual>},
    {"<=", test_compare<CompareOp::LessEqual>},
    {"gt", test_compare<CompareOp::Greater>},
    {"greaterthan", test_compare<CompareOp::Greater>},
    {">", test_compare<CompareOp::Greater>},
    {"ge", test_compare<CompareOp::GreaterEqual>},
    {">=", test_compare<CompareOp::GreaterEqual>},
}};

}  // namespace

TestFn find_test(std::string_view name) {
  for (const TestEntry& entry : kTests) {
    if (entry.name == name) return entry.fn;
  }
  return nullptr;
}

bool run_test(RenderState& state, TestFn fn, const Value& input, const CallArgs& args) {
  state.budget.spend_value(input);
  state.budget.spend_args(args);
  return fn(state, input, args);
}

bool apply_test(RenderState& state, std::string_view name, const Value& input,
                const CallArgs& args) {
  const TestFn fn = find_test(name);
  if (fn == nullptr) render_fail("no test named '", name, "'");
  return run_test(state, fn, input, args);
}

}  // namespace sluice::jinja
