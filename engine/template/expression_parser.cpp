#include "engine/template/expression_parser.h"

#include <utility>

#include "engine/core/error.h"
#include "engine/template/template_filters.h"
#include "engine/template/template_tests.h"

namespace sluice::jinja {

namespace {

constexpr int kMaxNestingDepth = 200;

// Operator chains (a + b + c ..., x.a.b ..., x|f|g ...) build left-deep trees that evaluation
// walks recursively, so their links are bounded too, over one whole expression (nesting chains
// inside chains would otherwise multiply the depth). Together with the nesting above this keeps
// a template that does not recurse inside the renderer's kMaxRenderNesting.
constexpr int kMaxChainLinks = 500;

struct CompareToken {
  std::string_view text;
  CompareOp op;
};

constexpr CompareToken kCompareOperators[] = {
    {"==", CompareOp::Equal},     {"!=", CompareOp::NotEqual}, {"<", CompareOp::Less},
    {"<=", CompareOp::LessEqual}, {">", CompareOp::Greater},   {">=", CompareOp::GreaterEqual},
};

}  // namespace

ExpressionParser::DepthGuard::DepthGuard(ExpressionParser& parser) : parser_(parser) {
  if (++parser_.depth_ > kMaxNestingDepth) {
    parser_.stream_.fail("expression nested too deeply");
  }
}

void ExpressionParser::extend_chain() {
  if (++chain_links_ > kMaxChainLinks) stream_.fail("expression too long");
}

ExprPtr ExpressionParser::parse_expression(bool with_conditional) {
  if (depth_ == 0) chain_links_ = 0;  // a new top-level expression
  DepthGuard guard(*this);
  return with_conditional ? parse_conditional() : parse_or();
}

bool ExpressionParser::at_tuple_end(std::initializer_list<std::string_view> end_names) const {
  if (stream_.at(TokenKind::VariableEnd) || stream_.at(TokenKind::BlockEnd) ||
      stream_.at_operator(")")) {
    return true;
  }
  for (const std::string_view name : end_names) {
    if (stream_.at_name(name)) return true;
  }
  return false;
}

ExprPtr ExpressionParser::parse_tuple(bool with_conditional,
                                      std::initializer_list<std::string_view> end_names,
                                      bool explicit_parentheses) {
  const uint32_t offset = stream_.current().offset;
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) stream_.expect_operator(",");
    if (at_tuple_end(end_names)) break;
    items.push_back(parse_expression(with_conditional));
    if (!stream_.at_operator(",")) break;
    is_tuple = true;
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items.front());
    if (!explicit_parentheses) {
      stream_.fail(str_cat("expected an expression, got ", stream_.describe_current()));
    }
  }
  auto tuple = std::make_unique<ListExpr>(offset, true);
  tuple->items = std::move(items);
  return tuple;
}

AssignTarget ExpressionParser::parse_assign_target(
    bool with_namespace, std::initializer_list<std::string_view> end_names) {
  AssignTarget target;
  if (with_namespace && stream_.peek().kind == TokenKind::Operator && stream_.peek().text == ".") {
    target.names.push_back(stream_.expect_identifier());
    stream_.next();  // the dot
    target.attribute = stream_.expect_identifier();
    return target;
  }
  while (true) {
    target.names.push_back(stream_.expect_identifier());
    if (!stream_.at_operator(",")) break;
    stream_.next();
    target.is_tuple = true;
    if (at_tuple_end(end_names) || stream_.at_operator("=")) break;  // trailing comma
  }
  return target;
}

ExprPtr ExpressionParser::parse_conditional() {
  const uint32_t offset = stream_.current().offset;
  ExprPtr expr = parse_or();
  while (stream_.skip_name("if")) {
    extend_chain();
    auto conditional = std::make_unique<ConditionalExpr>(offset);
    conditional->if_true = std::move(expr);
    conditional->condition = parse_or();
    if (stream_.skip_name("else")) conditional->if_false = parse_conditional();
    expr = std::move(conditional);
  }
  return expr;
}

ExprPtr ExpressionParser::parse_or() {
  ExprPtr left = parse_and();
  while (stream_.at_name("or")) {
    extend_chain();
    const uint32_t offset = stream_.next().offset;
    left = std::make_unique<BinaryExpr>(offset, BinaryOp::Or, std::move(left), parse_and());
  }
  return left;
}

ExprPtr ExpressionParser::parse_and() {
  ExprPtr left = parse_not();
  while (stream_.at_name("and")) {
    extend_chain();
    const uint32_t offset = stream_.next().offset;
    left = std::make_unique<BinaryExpr>(offset, BinaryOp::And, std::move(left), parse_not());
  }
  return left;
}

ExprPtr ExpressionParser::parse_not() {
  if (stream_.at_name("not")) {
    DepthGuard guard(*this);
    const uint32_t offset = stream_.next().offset;
    return std::make_unique<UnaryExpr>(offset, UnaryOp::Not, parse_not());
  }
  return parse_compare();
}

ExprPtr ExpressionParser::parse_compare() {
  const uint32_t offset = stream_.current().offset;
  ExprPtr first = parse_math1();
  std::vector<std::pair<CompareOp, ExprPtr>> rest;
  while (true) {
    std::optional<CompareOp> op;
    for (const CompareToken& candidate : kCompareOperators) {
      if (stream_.at_operator(candidate.text)) op = candidate.op;
    }
    if (op) {
      stream_.next();
    } else if (stream_.skip_name("in")) {
      op = CompareOp::In;
    } else if (stream_.at_name("not") && stream_.peek().kind == TokenKind::Name &&
               stream_.peek().text == "in") {
      stream_.next();
      stream_.next();
      op = CompareOp::NotIn;
    } else {
      break;
    }
    extend_chain();
    rest.emplace_back(*op, parse_math1());
  }
  if (rest.empty()) return first;
  auto compare = std::make_unique<CompareExpr>(offset);
  compare->first = std::move(first);
  compare->rest = std::move(rest);
  return compare;
}

ExprPtr ExpressionParser::parse_math1() {
  ExprPtr left = parse_concat();
  while (stream_.at_operator("+") || stream_.at_operator("-")) {
    extend_chain();
    const Token& token = stream_.next();
    const BinaryOp op = token.text == "+" ? BinaryOp::Add : BinaryOp::Subtract;
    left = std::make_unique<BinaryExpr>(token.offset, op, std::move(left), parse_concat());
  }
  return left;
}

ExprPtr ExpressionParser::parse_concat() {
  ExprPtr left = parse_math2();
  while (stream_.at_operator("~")) {
    extend_chain();
    const uint32_t offset = stream_.next().offset;
    left = std::make_unique<BinaryExpr>(offset, BinaryOp::Concat, std::move(left), parse_math2());
  }
  return left;
}

ExprPtr ExpressionParser::parse_math2() {
  ExprPtr left = parse_pow();
  while (true) {
    BinaryOp op;
    if (stream_.at_operator("*")) {
      op = BinaryOp::Multiply;
    } else if (stream_.at_operator("/")) {
      op = BinaryOp::Divide;
    } else if (stream_.at_operator("//")) {
      op = BinaryOp::FloorDivide;
    } else if (stream_.at_operator("%")) {
      op = BinaryOp::Modulo;
    } else {
      break;
    }
    extend_chain();
    const uint32_t offset = stream_.next().offset;
    left = std::make_unique<BinaryExpr>(offset, op, std::move(left), parse_pow());
  }
  return left;
}

ExprPtr ExpressionParser::parse_pow() {
  ExprPtr left = parse_unary();
  while (stream_.at_operator("**")) {
    extend_chain();
    const uint32_t offset = stream_.next().offset;
    left = std::make_unique<BinaryExpr>(offset, BinaryOp::Power, std::move(left), parse_unary());
  }
  return left;
}

ExprPtr ExpressionParser::parse_unary(bool with_filter) {
  DepthGuard guard(*this);
  ExprPtr node;
  if (stream_.at_operator("-") || stream_.at_operator("+")) {
    const Token& token = stream_.next();
    const UnaryOp op = token.text == "-" ? UnaryOp::Negate : UnaryOp::Plus;
    node = std::make_unique<UnaryExpr>(token.offset, op, parse_unary(false));
  } else {
    node = parse_primary();
  }
  node = parse_postfix(std::move(node));
  return with_filter ? parse_filter_expr(std::move(node)) : std::move(node);
}

ExprPtr ExpressionParser::parse_primary() {
  const Token& token = stream_.current();
  const uint32_t offset = token.offset;
  switch (token.kind) {
    case TokenKind::Name: {
      const std::string name = stream_.next().text;
      if (name == "true" || name == "True")
        return std::make_unique<LiteralExpr>(offset, Value::boolean(true));
      if (name == "false" || name == "False")
        return std::make_unique<LiteralExpr>(offset, Value::boolean(false));
      if (name == "none" || name == "None")
        return std::make_unique<LiteralExpr>(offset, Value::none());
      return std::make_unique<NameExpr>(offset, name);
    }
    case TokenKind::String: {
      std::string text = stream_.next().text;
      while (stream_.at(TokenKind::String)) text += stream_.next().text;  // "a" "b" is "ab"
      return std::make_unique<LiteralExpr>(offset, Value::string(std::move(text)));
    }
    case TokenKind::Integer:
      return std::make_unique<LiteralExpr>(offset, Value::integer(stream_.next().int_value));
    case TokenKind::Float:
      return std::make_unique<LiteralExpr>(offset, Value::floating(stream_.next().float_value));
    default:
      break;
  }
  if (stream_.skip_operator("(")) {
    ExprPtr inner = parse_tuple(true, {}, true);
    stream_.expect_operator(")");
    return inner;
  }
  if (stream_.at_operator("[")) return parse_list_literal();
  if (stream_.at_operator("{")) return parse_dict_literal();
  stream_.fail(str_cat("unexpected ", stream_.describe_current()));
}

ExprPtr ExpressionParser::parse_list_literal() {
  auto list = std::make_unique<ListExpr>(stream_.next().offset, false);
  while (!stream_.at_operator("]")) {
    if (!list->items.empty()) stream_.expect_operator(",");
    if (stream_.at_operator("]")) break;  // trailing comma
    list->items.push_back(parse_expression());
  }
  stream_.expect_operator("]");
  return list;
}

ExprPtr ExpressionParser::parse_dict_literal() {
  auto dict = std::make_unique<DictExpr>(stream_.next().offset);
  while (!stream_.at_operator("}")) {
    if (!dict->entries.empty()) stream_.expect_operator(",");
    if (stream_.at_operator("}")) break;  // trailing comma
    ExprPtr key = parse_expression();
    stream_.expect_operator(":");
    dict->entries.emplace_back(std::move(key), parse_expression());
  }
  stream_.expect_operator("}");
  return dict;
}

ExprPtr ExpressionParser::parse_postfix(ExprPtr node) {
  while (true) {
    const bool continues =
        stream_.at_operator(".") || stream_.at_operator("[") || stream_.at_operator("(");
    if (continues) extend_chain();
    if (stream_.at_operator(".") || stream_.at_operator("[")) {
      node = parse_subscript(std::move(node));
    } else if (stream_.at_operator("(")) {
      auto call = std::make_unique<CallExpr>(stream_.current().offset);
      call->callee = std::move(node);
      call->args = parse_call_args();
      node = std::move(call);
    } else {
      return node;
    }
  }
}

ExprPtr ExpressionParser::parse_subscript(ExprPtr node) {
  const Token& token = stream_.next();
  const uint32_t offset = token.offset;
  if (token.text == ".") {
    const Token& attribute = stream_.current();
    if (attribute.kind == TokenKind::Integer) {  // `items.0` is items[0]
      auto subscript = std::make_unique<SubscriptExpr>(offset);
      subscript->object = std::move(node);
      subscript->index =
          std::make_unique<LiteralExpr>(attribute.offset, Value::integer(stream_.next().int_value));
      return subscript;
    }
    auto access = std::make_unique<AttributeExpr>(offset);
    access->object = std::move(node);
    access->name = stream_.expect(TokenKind::Name, "an attribute name").text;
    return access;
  }
  ExprPtr index = parse_subscript_bound();
  if (stream_.at_operator(",")) stream_.fail("subscripts with several indices are not supported");
  stream_.expect_operator("]");
  if (index->kind == ExprKind::Slice) {
    static_cast<SliceExpr&>(*index).object = std::move(node);
    return index;
  }
  auto subscript = std::make_unique<SubscriptExpr>(offset);
  subscript->object = std::move(node);
  subscript->index = std::move(index);
  return subscript;
}

// Parses an index or a slice `start:stop:step` (any part may be missing); a slice comes back
// as a SliceExpr without its object.
ExprPtr ExpressionParser::parse_subscript_bound() {
  const uint32_t offset = stream_.current().offset;
  ExprPtr start;
  if (!stream_.at_operator(":")) {
    start = parse_expression();
    if (!stream_.at_operator(":")) return start;
  }
  stream_.next();  // the first colon
  auto slice = std::make_unique<SliceExpr>(offset);
  slice->start = std::move(start);
  const auto at_bound_end = [&] {
    return stream_.at_operator("]") || stream_.at_operator(",") || stream_.at_operator(":");
  };
  if (!at_bound_end()) slice->stop = parse_expression();
  if (stream_.skip_operator(":")) {
    if (!at_bound_end()) slice->step = parse_expression();
  }
  return slice;
}

ArgExprs ExpressionParser::parse_call_args() {
  stream_.expect_operator("(");
  ArgExprs args;
  bool needs_comma = false;
  while (!stream_.at_operator(")")) {
    if (needs_comma) {
      stream_.expect_operator(",");
      if (stream_.at_operator(")")) break;  // trailing comma
    }
    if (stream_.at_operator("*") || stream_.at_operator("**")) {
      stream_.fail("*args and **kwargs in calls are not supported");
    }
    if (stream_.at(TokenKind::Name) && stream_.peek().kind == TokenKind::Operator &&
        stream_.peek().text == "=") {
      std::string name = stream_.next().text;
      stream_.next();  // '='
      args.keyword.emplace_back(std::move(name), parse_expression());
    } else {
      if (!args.keyword.empty()) stream_.fail("positional argument follows keyword argument");
      args.positional.push_back(parse_expression());
    }
    needs_comma = true;
  }
  stream_.expect_operator(")");
  return args;
}

FilterCall ExpressionParser::parse_filter_call() {
  FilterCall call;
  call.offset = stream_.current().offset;
  call.name = stream_.expect(TokenKind::Name, "a filter name").text;
  while (stream_.skip_operator(".")) call.name += str_cat(".", stream_.expect_identifier());
  call.fn = find_filter(call.name);
  if (stream_.at_operator("(")) call.args = parse_call_args();
  return call;
}

ExprPtr ExpressionParser::parse_filter_expr(ExprPtr node) {
  while (true) {
    const bool continues =
        stream_.at_operator("|") || stream_.at_name("is") || stream_.at_operator("(");
    if (continues) extend_chain();
    if (stream_.at_operator("|")) {
      auto filter = std::make_unique<FilterExpr>(stream_.next().offset);
      filter->input = std::move(node);
      filter->filter = parse_filter_call();
      node = std::move(filter);
    } else if (stream_.at_name("is")) {
      node = parse_test(std::move(node));
    } else if (stream_.at_operator("(")) {
      auto call = std::make_unique<CallExpr>(stream_.current().offset);
      call->callee = std::move(node);
      call->args = parse_call_args();
      node = std::move(call);
    } else {
      return node;
    }
  }
}

ExprPtr ExpressionParser::parse_test(ExprPtr node) {
  auto test = std::make_unique<TestExpr>(stream_.next().offset);
  test->input = std::move(node);
  test->is_negated = stream_.skip_name("not");
  test->name = stream_.expect(TokenKind::Name, "a test name").text;
  while (stream_.skip_operator(".")) test->name += str_cat(".", stream_.expect_identifier());
  test->fn = find_test(test->name);
  const Token& token = stream_.current();
  const bool starts_argument = token.kind == TokenKind::Name || token.kind == TokenKind::String ||
                               token.kind == TokenKind::Integer || token.kind == TokenKind::Float ||
                               stream_.at_operator("[") || stream_.at_operator("{");
  if (stream_.at_operator("(")) {
    test->args = parse_call_args();
  } else if (starts_argument && !stream_.at_name("else") && !stream_.at_name("or") &&
             !stream_.at_name("and")) {
    // `x is divisibleby 3`: one argument without parentheses.
    if (stream_.at_name("is")) stream_.fail("you cannot chain multiple tests with is");
    test->args.positional.push_back(parse_postfix(parse_primary()));
  }
  return test;
}

}  // namespace sluice::jinja
