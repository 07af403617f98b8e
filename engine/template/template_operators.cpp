#include "engine/template/template_operators.h"

#include <cmath>

#include "engine/template/markup.h"
#include "engine/template/python_format.h"
#include "engine/template/python_number.h"
#include "engine/template/render_fault.h"

namespace sluice::jinja {

namespace {

const char* operator_symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "+";
    case BinaryOp::Subtract:
      return "-";
    case BinaryOp::Multiply:
      return "*";
    case BinaryOp::Divide:
      return "/";
    case BinaryOp::FloorDivide:
      return "//";
    case BinaryOp::Modulo:
      return "%";
    case BinaryOp::Power:
      return "** or pow()";
    default:
      return "?";
  }
}

[[noreturn]] void fail_operands(BinaryOp op, const Value& a, const Value& b) {
  render_fail("unsupported operand type(s) for ", operator_symbol(op), ": '", type_name(a),
              "' and '", type_name(b), "'");
}

int64_t checked_int(bool overflowed, int64_t value) {
  if (overflowed) render_fail("integer overflow (values past 64 bits are not supported)");
  return value;
}

Value integer_arithmetic(BinaryOp op, int64_t a, int64_t b) {
  int64_t result = 0;
  switch (op) {
    case BinaryOp::Add: {
      const bool overflowed = __builtin_add_overflow(a, b, &result);
      return Value::integer(checked_int(overflowed, result));
    }
    case BinaryOp::Subtract: {
      const bool overflowed = __builtin_sub_overflow(a, b, &result);
      return Value::integer(checked_int(overflowed, result));
    }
    case BinaryOp::Multiply: {
      const bool overflowed = __builtin_mul_overflow(a, b, &result);
      return Value::integer(checked_int(overflowed, result));
    }
    case BinaryOp::Divide:
      if (b == 0) render_fail("division by zero");
      return Value::floating(static_cast<double>(a) / static_cast<double>(b));
    case BinaryOp::FloorDivide:
      if (b == 0) render_fail("integer division or modulo by zero");
      if (a == INT64_MIN && b == -1) checked_int(true, 0);  // the quotient does not fit
      return Value::integer(python_floor_div(a, b));
    case BinaryOp::Modulo:
      if (b == 0) render_fail("integer modulo by zero");
      return Value::integer(b == -1 ? 0 : python_mod(a, b));
    case BinaryOp::Power: {
      if (b < 0) return Value::floating(std::pow(static_cast<double>(a), static_cast<double>(b)));
      // Square-and-multiply; a squared base is always used later, so its overflow is the result's.
      int64_t power = 1;
      for (int64_t base = a, exponent = b; exponent > 0; exponent >>= 1) {
        if ((exponent & 1) && __builtin_mul_overflow(power, base, &power)) checked_int(true, 0);
        if (exponent > 1 && __builtin_mul_overflow(base, base, &base)) checked_int(true, 0);
      }
      return Value::integer(power);
    }
    default:
      return Value();
  }
}

Value float_arithmetic(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::Add:
      return Value::floating(a + b);
    case BinaryOp::Subtract:
      return Value::floating(a - b);
    case BinaryOp::Multiply:
      return Value::floating(a * b);
    case BinaryOp::Divide:
      if (b == 0.0) render_fail("float division by zero");
      return Value::floating(a / b);
    case BinaryOp::FloorDivide:
      if (b == 0.0) render_fail("float floor division by zero");
      return Value::floating(python_floor_div(a, b));
    case BinaryOp::Modulo:
      if (b == 0.0) render_fail("float modulo");
      return Value::floating(python_mod(a, b));
    case BinaryOp::Power:
      if (a == 0.0 && b < 0.0) render_fail("0.0 cannot be raised to a negative power");
      if (a < 0.0 && b != std::floor(b)) render_fail("complex numbers are not supported");
      return Value::floating(std::pow(a, b));
    default:
      return Value();
  }
}

// Returns size * times, or UINT64_MAX when that does not fit. Precondition: times >= 0.
uint64_t repeated_size(size_t size, int64_t times) {
  uint64_t total = 0;
  return __builtin_mul_overflow(uint64_t{size}, static_cast<uint64_t>(times), &total) ? UINT64_MAX
                                                                                      : total;
}

Value repeat(const Value& sequence, int64_t times) {
  times = std::max<int64_t>(times, 0);
  if (sequence.is_string()) {
    const std::string& text = sequence.as_string();
    check_string_bytes(repeated_size(text.size(), times), "string repetition result");
    const size_t total = text.size() * static_cast<size_t>(times);
    if (total == 0) return Value::string(std::string());  // '' * 10**12 must not loop
    std::string out;
    out.reserve(total);
    out = text;
    // Doubling: 'x' * 10**7 is a few dozen copies, not ten million appends. No reallocation
    // happens (reserved), so appending out's own prefix is safe.
    while (out.size() < total) out.append(out, 0, std::min(out.size(), total - out.size()));
    return Value::string(std::move(out));
  }
  const List& list = sequence.as_list();
  check_list_items(repeated_size(list.items.size(), times), "list repetition result");
  if (list.items.empty()) times = 0;  // [] * 10**12 must not loop 10**12 times
  std::vector<Value> items;
  items.reserve(list.items.size() * static_cast<size_t>(times));
  for (int64_t i = 0; i < times; ++i)
    items.insert(items.end(), list.items.begin(), list.items.end());
  return make_list(std::move(items),
                   list.flavor == ListFlavor::Tuple ? ListFlavor::Tuple : ListFlavor::List);
}

bool is_sequence_for_concat(const Value& value) {
  return value.is_list() && (value.as_list().flavor == ListFlavor::List ||
                             value.as_list().flavor == ListFlavor::Tuple);
}

Value add(const Value& a, const Value& b) {
  if (a.is_string() && b.is_string()) {
    if (a.is_markup() || b.is_markup()) return add_markup(a, b);
    return concat_strings(a.as_string(), b.as_string());
  }
  // Markup + 1 is NotImplemented in markupsafe, which Python reports as a bad operand.
  if (a.is_markup()) fail_operands(BinaryOp::Add, a, b);
  if (is_sequence_for_concat(a) && is_sequence_for_concat(b) &&
      a.as_list().flavor == b.as_list().flavor) {
    check_list_items(uint64_t{a.as_list().items.size()} + b.as_list().items.size(), "list result");
    std::vector<Value> items = a.as_list().items;
    items.insert(items.end(), b.as_list().items.begin(), b.as_list().items.end());
    return make_list(std::move(items), a.as_list().flavor);
  }
  if (a.is_string() || is_sequence_for_concat(a)) {
    render_fail("can only concatenate ", type_name(a), " (not \"", type_name(b), "\") to ",
                type_name(a));
  }
  fail_operands(BinaryOp::Add, a, b);
}

}  // namespace

Value binary_operation(BinaryOp op, const Value& a, const Value& b) {
  if (op == BinaryOp::Concat) return concat_strings(to_str(a), to_str(b));
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return float_arithmetic(op, a.as_float(), b.as_float());
    return integer_arithmetic(op, a.as_int(), b.as_int());
  }
  if (op == BinaryOp::Add) return add(a, b);
  if (op == BinaryOp::Multiply) {
    if ((a.is_string() || is_sequence_for_concat(a)) && (b.is_int() || b.is_bool())) {
      Value repeated = repeat(a, b.as_int());
      return a.is_markup() ? Value::markup(repeated.string_ptr()) : repeated;
    }
    if ((b.is_string() || is_sequence_for_concat(b)) && (a.is_int() || a.is_bool())) {
      Value repeated = repeat(b, a.as_int());
      return b.is_markup() ? Value::markup(repeated.string_ptr()) : repeated;
    }
  }
  if (op == BinaryOp::Multiply && (a.is_string() || is_sequence_for_concat(a))) {
    render_fail("can't multiply sequence by non-int of type '", type_name(b), "'");
  }
  if (op == BinaryOp::Modulo && a.is_markup()) {
    return Value::markup(python_percent_format(a.as_string(), b, FieldEscaping::Html));
  }
  if (op == BinaryOp::Modulo && a.is_string()) {
    return Value::string(python_percent_format(a.as_string(), b));
  }
  fail_operands(op, a, b);
}

Value unary_operation(UnaryOp op, const Value& a) {
  if (a.is_undefined()) fail_undefined(a);
  if (a.is_float()) return Value::floating(op == UnaryOp::Negate ? -a.as_float() : a.as_float());
  if (a.is_int() || a.is_bool()) {
    if (op == UnaryOp::Plus) return Value::integer(a.as_int());
    if (a.as_int() == INT64_MIN) checked_int(true, 0);
    return Value::integer(-a.as_int());
  }
  render_fail("bad operand type for unary ", op == UnaryOp::Negate ? "-" : "+", ": '", type_name(a),
              "'");
}

int order_values(const Value& a, const Value& b) {
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) {
      const double x = a.as_float();
      const double y = b.as_float();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    return a.as_int() < b.as_int() ? -1 : (a.as_int() > b.as_int() ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    // Byte order of UTF-8 is codepoint order, which is how Python orders str.
    const int result = a.as_string().compare(b.as_string());
    return result < 0 ? -1 : (result > 0 ? 1 : 0);
  }
  if (a.is_list() && b.is_list() && a.as_list().flavor == b.as_list().flavor) {
    const auto& x = a.as_list().items;
    const auto& y = b.as_list().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!values_equal(x[i], y[i])) return order_values(x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  render_fail("'<' not supported between instances of '", type_name(a), "' and '", type_name(b),
              "'");
}

bool compare_values(CompareOp op, const Value& a, const Value& b) {
  switch (op) {
    case CompareOp::Equal:
      return values_equal(a, b);
    case CompareOp::NotEqual:
      return !values_equal(a, b);
    case CompareOp::Less:
      return order_values(a, b) < 0;
    case CompareOp::LessEqual:
      return order_values(a, b) <= 0;
    case CompareOp::Greater:
      return order_values(a, b) > 0;
    case CompareOp::GreaterEqual:
      return order_values(a, b) >= 0;
    case CompareOp::In:
      return contains(b, a);
    case CompareOp::NotIn:
      return !contains(b, a);
  }
  return false;
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case ValueKind::Undefined:
      return false;  // iterates as empty
    case ValueKind::String:
      if (!item.is_string()) {
        render_fail("'in <string>' requires string as left operand, not ", type_name(item));
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case ValueKind::List:
      for (const Value& element : container.as_list().items) {
        if (values_equal(element, item)) return true;
      }
      return false;
    case ValueKind::Dict:
      check_hashable(item);
      return container.as_dict().find(item) != nullptr;
    default:
      render_fail("argument of type '", type_name(container), "' is not iterable");
  }
}

}  // namespace sluice::jinja
