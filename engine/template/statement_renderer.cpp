#include "engine/template/statement_renderer.h"

#include <utility>

#include "engine/template/call_args.h"
#include "engine/template/expression_evaluator.h"
#include "engine/template/loop_object.h"
#include "engine/template/namespace_object.h"
#include "engine/template/render_fault.h"

namespace sluice::jinja {

namespace {

// Deeper macro recursion than this fails instead of overflowing the stack.
constexpr int kMaxCallDepth = 100;

void append_output(RenderState& state, std::string_view text) {
  check_string_bytes(uint64_t{state.out->size()} + text.size(), "template output");
  state.budget.spend_bytes(text.size());
  *state.out += text;
}

// Writes str(value), as {{ }} prints it.
void append_value(RenderState& state, const Value& value) {
  if (value.is_string()) {
    append_output(state, value.as_string());
  } else {
    append_output(state, to_str(value));
  }
}

// Renders a body into a string of its own (block set, filter block, macro call).
std::string capture(RenderState& state, const Body& body) {
  std::string text;
  std::string* const outer = std::exchange(state.out, &text);
  render_body(state, body);
  state.out = outer;
  return text;
}

void assign(RenderState& state, const AssignTarget& target, Value value) {
  if (!target.attribute.empty()) {
    const Value* bound = state.scopes.find(target.names[0]);
    auto* ns = bound != nullptr && bound->is_object()
                   ? dynamic_cast<NamespaceObject*>(&bound->as_object())
                   : nullptr;
    if (ns == nullptr) render_fail("cannot assign attribute on non-namespace object");
    ns->set_attribute(target.attribute, std::move(value));
    return;
  }
  if (!target.is_tuple) {
    state.scopes.set(target.names[0], std::move(value));
    return;
  }
  if (!value.is_list() && !value.is_string() && !value.is_dict() && !value.is_undefined()) {
    render_fail("cannot unpack non-iterable ", type_name(value), " object");
  }
  const ListPtr items = iterate(value);
  const size_t expected = target.names.size();
  if (items->items.size() < expected) {
    render_fail("not enough values to unpack (expected ", expected, ", got ", items->items.size(),
                ")");
  }
  if (items->items.size() > expected)
    render_fail("too many values to unpack (expected ", expected, ")");
  for (size_t i = 0; i < expected; ++i) state.scopes.set(target.names[i], items->items[i]);
}

// A macro defined with {% macro %}: called, it renders its body with its parameters bound and
// returns the text.
class MacroObject final : public Object {
 public:
  explicit MacroObject(const MacroStmt& macro) : macro_(macro) {}

  std::string type_name() const override { return "Macro"; }
  std::string repr() const override { return "<Macro '" + macro_.name + "'>"; }
  bool is_callable() const override { return true; }

  Value call(RenderState& state, const CallArgs& args) const override {
    if (args.positional.size() > macro_.params.size()) {
      render_fail("macro '", macro_.name, "' takes not more than ", macro_.params.size(),
                  " argument(s)");
    }
    if (state.call_depth >= kMaxCallDepth) render_fail("maximum macro recursion depth exceeded");
    state.budget.count_step();
    ++state.call_depth;
    state.scopes.push(true);
    for (const auto& [name, value] : args.keyword) {
      if (!has_param(name))
        render_fail("macro '", macro_.name, "' takes no keyword argument '", name, "'");
    }
    for (size_t i = 0; i < macro_.params.size(); ++i) bind_param(state, args, i);
    const uint32_t call_offset = state.offset;
    std::string text = capture(state, macro_.body);
    state.offset = call_offset;
    state.scopes.pop();
    --state.call_depth;
    return Value::string(std::move(text));
  }

 private:
  bool has_param(std::string_view name) const {
    for (const MacroParam& param : macro_.params) {
      if (param.name == name) return true;
    }
    return false;
  }

  // Binds parameter i from the call, its default (evaluated now, seeing earlier parameters),
  // or leaves it undefined, as Jinja2 does for a missing argument.
  void bind_param(RenderState& state, const CallArgs& args, size_t i) const {
    const MacroParam& param = macro_.params[i];
    if (i < args.positional.size()) {
      state.scopes.set(param.name, args.positional[i]);
    } else if (const Value* keyword = args.find_keyword(param.name)) {
      state.scopes.set(param.name, *keyword);
    } else if (param.default_value) {
      state.scopes.set(param.name, evaluate(state, *param.default_value));
    } else {
      state.scopes.set(param.name,
                       Value::undefined(str_cat("parameter '", param.name, "' was not provided")));
    }
  }

  const MacroStmt& macro_;
};

Flow render_if(RenderState& state, const IfStmt& branch) {
  for (const auto& [condition, body] : branch.branches) {
    if (is_truthy(evaluate(state, *condition))) return render_body(state, body);
  }
  return render_body(state, branch.else_body);
}

// Returns the items the loop visits: all of them, or those passing the loop's `if`.
ListPtr loop_items(RenderState& state, const ForStmt& loop, const Value& iterable) {
  state.offset = loop.iterable->offset;
  ListPtr items = iterate(iterable);
  if (!loop.condition) return items;
  auto kept = std::make_shared<List>();
  state.scopes.push();
  for (const Value& item : items->items) {
    state.budget.count_step();
    state.scopes.clear_innermost();
    assign(state, loop.target, item);
    if (is_truthy(evaluate(state, *loop.condition))) kept->items.push_back(item);
  }
  state.scopes.pop();
  return kept;
}

Flow render_loop(RenderState& state, const ForStmt& loop, const Value& iterable, size_t depth0) {
  const ListPtr items = loop_items(state, loop, iterable);
  if (items->items.empty()) return render_body(state, loop.else_body);
  LoopObject::Recurse recurse;
  if (loop.is_recursive) {
    recurse = [&loop, depth0](RenderState& inner, const Value& children) {
      if (inner.call_depth >= kMaxCallDepth) render_fail("maximum loop recursion depth exceeded");
      inner.budget.count_step();
      inner.budget.spend_value(children);
      ++inner.call_depth;
      std::string text;
      std::string* const outer = std::exchange(inner.out, &text);
      render_loop(inner, loop, children, depth0 + 1);
      inner.out = outer;
      --inner.call_depth;
      return Value::string(std::move(text));
    };
  }
  const auto loop_object = std::make_shared<LoopObject>(items, depth0, std::move(recurse));
  const Value loop_value = Value::object(loop_object);
  state.scopes.push();
  for (size_t i = 0; i < items->items.size(); ++i) {
    state.budget.count_step();
    // Each iteration starts with a fresh frame: a `set` in the body lasts one iteration.
    state.scopes.clear_innermost();
    loop_object->set_index(i);
    state.scopes.set("loop", loop_value);
    state.offset = loop.offset;
    assign(state, loop.target, items->items[i]);
    if (render_body(state, loop.body) == Flow::Break) break;
  }
  state.scopes.pop();
  return Flow::Normal;
}

Flow render_for(RenderState& state, const ForStmt& loop) {
  const Value iterable = evaluate(state, *loop.iterable);
  state.budget.spend_value(iterable);
  return render_loop(state, loop, iterable, 0);
}

Value apply_filters(RenderState& state, const std::vector<FilterCall>& filters, Value value) {
  for (const FilterCall& filter : filters) value = apply_filter_call(state, filter, value);
  return value;
}

Flow render_scope(RenderState& state, const ScopeStmt& scope) {
  std::vector<Value> values;
  for (const auto& [name, expr] : scope.assignments) values.push_back(evaluate(state, *expr));
  state.scopes.push();
  for (size_t i = 0; i < values.size(); ++i)
    state.scopes.set(scope.assignments[i].first, values[i]);
  const Flow flow = render_body(state, scope.body);
  state.scopes.pop();
  return flow;
}

Flow render_statement(RenderState& state, const Stmt& stmt) {
  switch (stmt.kind) {
    case StmtKind::Text:
      append_output(state, static_cast<const TextStmt&>(stmt).text);
      return Flow::Normal;
    case StmtKind::Output:
      append_value(state, evaluate(state, *static_cast<const OutputStmt&>(stmt).expr));
      return Flow::Normal;
    case StmtKind::If:
      return render_if(state, static_cast<const IfStmt&>(stmt));
    case StmtKind::For:
      return render_for(state, static_cast<const ForStmt&>(stmt));
    case StmtKind::Set: {
      const auto& set = static_cast<const SetStmt&>(stmt);
      Value value = evaluate(state, *set.value);
      state.offset = stmt.offset;
      assign(state, set.target, std::move(value));
      return Flow::Normal;
    }
    case StmtKind::SetBlock: {
      const auto& set = static_cast<const SetBlockStmt&>(stmt);
      Value value = apply_filters(state, set.filters, Value::string(capture(state, set.body)));
      state.offset = stmt.offset;
      assign(state, set.target, std::move(value));
      return Flow::Normal;
    }
    case StmtKind::Macro: {
      const auto& macro = static_cast<const MacroStmt&>(stmt);
      state.scopes.set(macro.name, Value::object(std::make_shared<MacroObject>(macro)));
      return Flow::Normal;
    }
    case StmtKind::Break:
      return Flow::Break;
    case StmtKind::Continue:
      return Flow::Continue;
    case StmtKind::FilterBlock: {
      const auto& filter = static_cast<const FilterBlockStmt&>(stmt);
      const Value text = Value::string(capture(state, filter.body));
      append_value(state, apply_filters(state, filter.filters, text));
      return Flow::Normal;
    }
    case StmtKind::Scope:
      return render_scope(state, static_cast<const ScopeStmt&>(stmt));
  }
  return Flow::Normal;
}

}  // namespace

Flow render_body(RenderState& state, const Body& body) {
  const NestingGuard nesting(state.budget);
  for (const StmtPtr& stmt : body) {
    const Flow flow = render_statement(state, *stmt);
    if (flow != Flow::Normal) return flow;
  }
  return Flow::Normal;
}

}  // namespace sluice::jinja
