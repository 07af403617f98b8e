#include "engine/template/expression_evaluator.h"

#include "engine/template/render_fault.h"
#include "engine/template/template_filters.h"
#include "engine/template/template_globals.h"
#include "engine/template/template_operators.h"
#include "engine/template/template_tests.h"
#include "engine/template/value_access.h"

namespace sluice::jinja {

namespace {

Value evaluate_name(const RenderState& state, const NameExpr& expr) {
  if (const Value* bound = state.scopes.find(expr.name)) return *bound;
  if (const Value* global = find_global(expr.name)) return *global;
  return Value::undefined(str_cat("'", expr.name, "' is undefined"));
}

std::optional<int64_t> slice_bound(RenderState& state, const ExprPtr& expr) {
  if (!expr) return std::nullopt;
  const Value value = evaluate(state, *expr);
  if (value.is_none()) return std::nullopt;
  if (!value.is_int() && !value.is_bool()) {
    state.offset = expr->offset;
    render_fail("slice indices must be integers or None, not ", type_name(value));
  }
  return value.as_int();
}

Value evaluate_slice(RenderState& state, const SliceExpr& expr) {
  const Value object = evaluate(state, *expr.object);
  const std::optional<int64_t> start = slice_bound(state, expr.start);
  const std::optional<int64_t> stop = slice_bound(state, expr.stop);
  const std::optional<int64_t> step = slice_bound(state, expr.step);
  state.offset = expr.offset;
  state.budget.spend_value(object);
  Value slice = get_slice(object, start, stop, step);
  state.budget.spend_value(slice);
  return slice;
}

Value evaluate_call(RenderState& state, const CallExpr& expr) {
  const Value callee = evaluate(state, *expr.callee);
  const CallArgs args = evaluate_args(state, expr.args);
  state.offset = expr.offset;
  state.budget.spend_args(args);
  Value result = call_value(state, callee, args);
  state.budget.spend_value(result);
  return result;
}

Value evaluate_test(RenderState& state, const TestExpr& expr) {
  const Value input = evaluate(state, *expr.input);
  const CallArgs args = evaluate_args(state, expr.args);
  state.offset = expr.offset;
  if (expr.fn == nullptr) render_fail("no test named '", expr.name, "'");
  return Value::boolean(run_test(state, expr.fn, input, args) != expr.is_negated);
}

Value evaluate_binary(RenderState& state, const BinaryExpr& expr) {
  Value left = evaluate(state, *expr.left);
  if (expr.op == BinaryOp::And) return is_truthy(left) ? evaluate(state, *expr.right) : left;
  if (expr.op == BinaryOp::Or) return is_truthy(left) ? left : evaluate(state, *expr.right);
  const Value right = evaluate(state, *expr.right);
  state.offset = expr.offset;
  state.budget.spend_value(left);
  state.budget.spend_value(right);
  Value result = binary_operation(expr.op, left, right);
  state.budget.spend_value(result);
  return result;
}

// Counts what comparing a with b reads: both values, and for a substring test every pair of
// their bytes.
void spend_comparison(RenderBudget& budget, CompareOp op, const Value& a, const Value& b) {
  budget.spend_value(a);
  budget.spend_value(b);
  if ((op == CompareOp::In || op == CompareOp::NotIn) && a.is_string() && b.is_string()) {
    budget.spend_search(b.as_string().size(), a.as_string().size());
  }
}

Value evaluate_compare(RenderState& state, const CompareExpr& expr) {
  Value left = evaluate(state, *expr.first);
  for (const auto& [op, operand] : expr.rest) {
    Value right = evaluate(state, *operand);
    state.offset = operand->offset;
    spend_comparison(state.budget, op, left, right);
    if (!compare_values(op, left, right)) return Value::boolean(false);
    left = std::move(right);
  }
  return Value::boolean(true);
}

Value evaluate_conditional(RenderState& state, const ConditionalExpr& expr) {
  if (is_truthy(evaluate(state, *expr.condition))) return evaluate(state, *expr.if_true);
  if (!expr.if_false) {
    return Value::undefined(
        "the inline if-expression evaluated to false and no else section was defined.");
  }
  return evaluate(state, *expr.if_false);
}

Value evaluate_list(RenderState& state, const ListExpr& expr) {
  std::vector<Value> items;
  items.reserve(expr.items.size());
  for (const ExprPtr& item : expr.items) items.push_back(evaluate(state, *item));
  Value list = make_list(std::move(items), expr.is_tuple ? ListFlavor::Tuple : ListFlavor::List);
  state.budget.spend_value(list);
  return list;
}

Value evaluate_dict(RenderState& state, const DictExpr& expr) {
  Dict dict;
  for (const auto& [key_expr, value_expr] : expr.entries) {
    Value key = evaluate(state, *key_expr);
    if (!is_hashable(key)) {
      state.offset = key_expr->offset;
      check_hashable(key);
    }
    dict.set(std::move(key), evaluate(state, *value_expr));
  }
  Value value = make_dict(std::move(dict));
  state.budget.spend_value(value);
  return value;
}

Value evaluate_node(RenderState& state, const Expr& expr) {
  switch (expr.kind) {
    case ExprKind::Literal:
      return static_cast<const LiteralExpr&>(expr).value;
    case ExprKind::Name:
      return evaluate_name(state, static_cast<const NameExpr&>(expr));
    case ExprKind::Attribute: {
      const auto& access = static_cast<const AttributeExpr&>(expr);
      const Value object = evaluate(state, *access.object);
      state.offset = expr.offset;
      return get_attribute(object, access.name);
    }
    case ExprKind::Subscript: {
      const auto& subscript = static_cast<const SubscriptExpr&>(expr);
      const Value object = evaluate(state, *subscript.object);
      const Value index = evaluate(state, *subscript.index);
      state.offset = expr.offset;
      if (object.is_string()) state.budget.spend_value(object);  // indexing decodes the text
      return get_item(object, index);
    }
    case ExprKind::Slice:
      return evaluate_slice(state, static_cast<const SliceExpr&>(expr));
    case ExprKind::Call:
      return evaluate_call(state, static_cast<const CallExpr&>(expr));
    case ExprKind::Filter: {
      const auto& filter = static_cast<const FilterExpr&>(expr);
      return apply_filter_call(state, filter.filter, evaluate(state, *filter.input));
    }
    case ExprKind::Test:
      return evaluate_test(state, static_cast<const TestExpr&>(expr));
    case ExprKind::Unary: {
      const auto& unary = static_cast<const UnaryExpr&>(expr);
      const Value operand = evaluate(state, *unary.operand);
      if (unary.op == UnaryOp::Not) return Value::boolean(!is_truthy(operand));
      state.offset = expr.offset;
      return unary_operation(unary.op, operand);
    }
    case ExprKind::Binary:
      return evaluate_binary(state, static_cast<const BinaryExpr&>(expr));
    case ExprKind::Compare:
      return evaluate_compare(state, static_cast<const CompareExpr&>(expr));
    case ExprKind::Conditional:
      return evaluate_conditional(state, static_cast<const ConditionalExpr&>(expr));
    case ExprKind::ListLiteral:
      return evaluate_list(state, static_cast<const ListExpr&>(expr));
    case ExprKind::DictLiteral:
      return evaluate_dict(state, static_cast<const DictExpr&>(expr));
  }
  return Value();
}

}  // namespace

Value evaluate(RenderState& state, const Expr& expr) {
  const NestingGuard nesting(state.budget);
  return evaluate_node(state, expr);
}

CallArgs evaluate_args(RenderState& state, const ArgExprs& args) {
  CallArgs values;
  values.positional.reserve(args.positional.size());
  for (const ExprPtr& arg : args.positional) values.positional.push_back(evaluate(state, *arg));
  for (const auto& [name, arg] : args.keyword)
    values.keyword.emplace_back(name, evaluate(state, *arg));
  return values;
}

Value apply_filter_call(RenderState& state, const FilterCall& filter, const Value& input) {
  const CallArgs args = evaluate_args(state, filter.args);
  state.offset = filter.offset;
  if (filter.fn == nullptr) render_fail("no filter named '", filter.name, "'");
  return run_filter(state, filter.fn, input, args);
}

Value call_value(RenderState& state, const Value& callee, const CallArgs& args) {
  if (callee.is_undefined()) fail_undefined(callee);
  if (!callee.is_object() || !callee.as_object().is_callable()) {
    render_fail("'", type_name(callee), "' object is not callable");
  }
  return callee.as_object().call(state, args);
}

}  // namespace sluice::jinja
