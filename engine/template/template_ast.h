// The syntax tree of a compiled template. It is built once by compile() and only read while
// rendering, so one compiled template renders every row of a dataset. Filters and tests are
// resolved to function pointers at compile time (an unknown one keeps a null pointer and fails
// only if rendering reaches it, as a Jinja2 branch that never runs would not fail either).
// Every node keeps the byte offset of its source for error messages.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/template/template_value.h"

namespace sluice::jinja {

using FilterFn = Value (*)(RenderState& state, const Value& input, const CallArgs& args);
using TestFn = bool (*)(RenderState& state, const Value& input, const CallArgs& args);

enum class ExprKind : uint8_t {
  Literal,
  Name,
  Attribute,
  Subscript,
  Slice,
  Call,
  Filter,
  Test,
  Unary,
  Binary,
  Compare,
  Conditional,
  ListLiteral,
  DictLiteral,
};

struct Expr {
  Expr(ExprKind kind_in, uint32_t offset_in) : kind(kind_in), offset(offset_in) {}
  virtual ~Expr() = default;
  ExprKind kind;
  uint32_t offset;
};
using ExprPtr = std::unique_ptr<Expr>;

struct ArgExprs {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
};

struct LiteralExpr : Expr {
  LiteralExpr(uint32_t offset_in, Value value_in)
      : Expr(ExprKind::Literal, offset_in), value(std::move(value_in)) {}
  Value value;
};

struct NameExpr : Expr {
  NameExpr(uint32_t offset_in, std::string name_in)
      : Expr(ExprKind::Name, offset_in), name(std::move(name_in)) {}
  std::string name;
};

struct AttributeExpr : Expr {
  explicit AttributeExpr(uint32_t offset_in) : Expr(ExprKind::Attribute, offset_in) {}
  ExprPtr object;
  std::string name;
};

struct SubscriptExpr : Expr {
  explicit SubscriptExpr(uint32_t offset_in) : Expr(ExprKind::Subscript, offset_in) {}
  ExprPtr object;
  ExprPtr index;
};

struct SliceExpr : Expr {
  explicit SliceExpr(uint32_t offset_in) : Expr(ExprKind::Slice, offset_in) {}
  ExprPtr object;
  ExprPtr start;  // each of the three may be null
  ExprPtr stop;
  ExprPtr step;
};

struct CallExpr : Expr {
  explicit CallExpr(uint32_t offset_in) : Expr(ExprKind::Call, offset_in) {}
  ExprPtr callee;
  ArgExprs args;
};

// One filter application (`| name(args)`), shared by filter expressions and filter blocks.
struct FilterCall {
  std::string name;
  FilterFn fn = nullptr;  // null for a filter this interpreter does not know
  ArgExprs args;
  uint32_t offset = 0;
};

struct FilterExpr : Expr {
  explicit FilterExpr(uint32_t offset_in) : Expr(ExprKind::Filter, offset_in) {}
  ExprPtr input;
  FilterCall filter;
};

struct TestExpr : Expr {
  explicit TestExpr(uint32_t offset_in) : Expr(ExprKind::Test, offset_in) {}
  ExprPtr input;
  std::string name;
  TestFn fn = nullptr;  // null for a test this interpreter does not know
  ArgExprs args;
  bool is_negated = false;
};

enum class UnaryOp : uint8_t { Negate, Plus, Not };

struct UnaryExpr : Expr {
  UnaryExpr(uint32_t offset_in, UnaryOp op_in, ExprPtr operand_in)
      : Expr(ExprKind::Unary, offset_in), op(op_in), operand(std::move(operand_in)) {}
  UnaryOp op;
  ExprPtr operand;
};

enum class BinaryOp : uint8_t {
  Add,
  Subtract,
  Multiply,
  Divide,
  FloorDivide,
  Modulo,
  Power,
  Concat,
  And,
  Or,
};

struct BinaryExpr : Expr {
  BinaryExpr(uint32_t offset_in, BinaryOp op_in, ExprPtr left_in, ExprPtr right_in)
      : Expr(ExprKind::Binary, offset_in),
        op(op_in),
        left(std::move(left_in)),
        right(std::move(right_in)) {}
  BinaryOp op;
  ExprPtr left;
  ExprPtr right;
};

enum class CompareOp : uint8_t {
  Equal,
  NotEqual,
  Less,
  LessEqual,
  Greater,
  GreaterEqual,
  In,
  NotIn
};

// a < b <= c: each operand is compared with the next, as in Python.
struct CompareExpr : Expr {
  explicit CompareExpr(uint32_t offset_in) : Expr(ExprKind::Compare, offset_in) {}
  ExprPtr first;
  std::vector<std::pair<CompareOp, ExprPtr>> rest;
};

struct ConditionalExpr : Expr {
  explicit ConditionalExpr(uint32_t offset_in) : Expr(ExprKind::Conditional, offset_in) {}
  ExprPtr condition;
  ExprPtr if_true;
  ExprPtr if_false;  // null: `a if b` without else gives undefined
};

struct ListExpr : Expr {
  ListExpr(uint32_t offset_in, bool is_tuple_in)
      : Expr(ExprKind::ListLiteral, offset_in), is_tuple(is_tuple_in) {}
  std::vector<ExprPtr> items;
  bool is_tuple;
};

struct DictExpr : Expr {
  explicit DictExpr(uint32_t offset_in) : Expr(ExprKind::DictLiteral, offset_in) {}
  std::vector<std::pair<ExprPtr, ExprPtr>> entries;
};

enum class StmtKind : uint8_t {
  Text,
  Output,
  If,
  For,
  Set,
  SetBlock,
  Macro,
  Break,
  Continue,
  FilterBlock,
  Scope,
};

struct Stmt {
  Stmt(StmtKind kind_in, uint32_t offset_in) : kind(kind_in), offset(offset_in) {}
  virtual ~Stmt() = default;
  StmtKind kind;
  uint32_t offset;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

// What `for` and `set` assign to: a name, a tuple of names, or a namespace attribute.
struct AssignTarget {
  std::vector<std::string> names;
  bool is_tuple = false;
  std::string attribute;  // `ns.attr`: names[0] is the namespace
};

struct TextStmt : Stmt {
  TextStmt(uint32_t offset_in, std::string text_in)
      : Stmt(StmtKind::Text, offset_in), text(std::move(text_in)) {}
  std::string text;
};

struct OutputStmt : Stmt {
  OutputStmt(uint32_t offset_in, ExprPtr expr_in)
      : Stmt(StmtKind::Output, offset_in), expr(std::move(expr_in)) {}
  ExprPtr expr;
};

struct IfStmt : Stmt {
  explicit IfStmt(uint32_t offset_in) : Stmt(StmtKind::If, offset_in) {}
  std::vector<std::pair<ExprPtr, Body>> branches;  // if, then each elif
  Body else_body;
};

struct ForStmt : Stmt {
  explicit ForStmt(uint32_t offset_in) : Stmt(StmtKind::For, offset_in) {}
  AssignTarget target;
  ExprPtr iterable;
  ExprPtr condition;  // `for x in xs if cond`, may be null
  Body body;
  Body else_body;             // runs when no item was looped over
  bool is_recursive = false;  // `for ... recursive`: the body may call loop(children)
};

struct SetStmt : Stmt {
  explicit SetStmt(uint32_t offset_in) : Stmt(StmtKind::Set, offset_in) {}
  AssignTarget target;
  ExprPtr value;
};

// {% set name | filters %}body{% endset %}
struct SetBlockStmt : Stmt {
  explicit SetBlockStmt(uint32_t offset_in) : Stmt(StmtKind::SetBlock, offset_in) {}
  AssignTarget target;
  std::vector<FilterCall> filters;
  Body body;
};

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // null when the parameter is required
};

struct MacroStmt : Stmt {
  explicit MacroStmt(uint32_t offset_in) : Stmt(StmtKind::Macro, offset_in) {}
  std::string name;
  std::vector<MacroParam> params;
  Body body;
};

struct LoopControlStmt : Stmt {
  LoopControlStmt(StmtKind kind_in, uint32_t offset_in) : Stmt(kind_in, offset_in) {}
};

// {% filter name %}body{% endfilter %}
struct FilterBlockStmt : Stmt {
  explicit FilterBlockStmt(uint32_t offset_in) : Stmt(StmtKind::FilterBlock, offset_in) {}
  std::vector<FilterCall> filters;
  Body body;
};

// A body with its own variables: {% with a = 1 %}...{% endwith %}, and transformers'
// {% generation %}...{% endgeneration %} (which only marks assistant text).
struct ScopeStmt : Stmt {
  explicit ScopeStmt(uint32_t offset_in) : Stmt(StmtKind::Scope, offset_in) {}
  std::vector<std::pair<std::string, ExprPtr>> assignments;
  Body body;
};

// A compiled template: the normalized source (for error positions) and the statements.
struct TemplateProgram {
  std::string source;
  Body body;
  std::string origin;  // where the source came from, named in errors; "" when unnamed
};

}  // namespace sluice::jinja
