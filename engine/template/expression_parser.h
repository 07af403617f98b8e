// Parses Jinja expressions with Jinja2's grammar and precedence: conditional `a if b else c`,
// or, and, not, comparisons (chained, `in`, `not in`), + -, ~, * / // %, ** (left-associative,
// as in Jinja2), unary - +, then postfix attribute / subscript / slice / call, filters `|` and
// tests `is`, which bind tighter than every binary operator.
#pragma once

#include <initializer_list>
#include <string_view>
#include <vector>

#include "engine/template/template_ast.h"
#include "engine/template/token_stream.h"

namespace sluice::jinja {

class ExpressionParser {
 public:
  explicit ExpressionParser(TokenStream& stream) : stream_(stream) {}

  // Parses one expression; with_conditional=false stops before `if` (for loops, if tests).
  ExprPtr parse_expression(bool with_conditional = true);

  // Parses `a, b, c` as a tuple (a single expression without a comma stays itself). Stops at
  // the end of the tag, `)` or one of the names in end_names.
  ExprPtr parse_tuple(bool with_conditional = true,
                      std::initializer_list<std::string_view> end_names = {},
                      bool explicit_parentheses = false);

  // Parses what `for` and `set` assign to; with_namespace allows `ns.attr`.
  AssignTarget parse_assign_target(bool with_namespace,
                                   std::initializer_list<std::string_view> end_names = {});

  // Parses `name(args)` after a `|` (or at the start of a filter block).
  FilterCall parse_filter_call();

  // Parses `(a, b, key=c)`; the current token must be `(`.
  ArgExprs parse_call_args();

 private:
  ExprPtr parse_conditional();
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter = true);
  ExprPtr parse_primary();
  ExprPtr parse_list_literal();
  ExprPtr parse_dict_literal();
  ExprPtr parse_postfix(ExprPtr node);
  ExprPtr parse_subscript(ExprPtr node);
  ExprPtr parse_subscript_bound();
  ExprPtr parse_filter_expr(ExprPtr node);
  ExprPtr parse_test(ExprPtr node);
  bool at_tuple_end(std::initializer_list<std::string_view> end_names) const;
  // Counts one more link of an operator chain; fails past the limit.
  void extend_chain();

  // Counts nesting so that a hostile template fails cleanly instead of overflowing the stack.
  class DepthGuard {
   public:
    explicit DepthGuard(ExpressionParser& parser);
    ~DepthGuard() { --parser_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    ExpressionParser& parser_;
  };

  TokenStream& stream_;
  int depth_ = 0;
  int chain_links_ = 0;  // operator links in the current top-level expression
};

}  // namespace sluice::jinja
