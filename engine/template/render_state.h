// The mutable state of one render: scopes, where output goes, the clock strftime_now reads,
// the position being evaluated (for error messages) and the work budget. Created per render() call,
// so one compiled template can render on several threads at once.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/template/namespace_object.h"
#include "engine/template/render_budget.h"
#include "engine/template/scope_stack.h"

namespace sluice::jinja {

struct RenderState {
  RenderState(const Dict* variables, const RenderBudget& budget_in)
      : scopes(variables), budget(budget_in) {}
  // Empties the render's namespaces so that values referring to each other are all freed.
  ~RenderState() {
    for (const auto& ns : namespaces) ns->clear_attributes();
  }
  RenderState(const RenderState&) = delete;
  RenderState& operator=(const RenderState&) = delete;

  ScopeStack scopes;
  std::string* out = nullptr;        // where text goes (a macro call or set block swaps it)
  std::optional<std::tm> fixed_now;  // strftime_now's time; nullopt reads the local clock
  uint32_t offset = 0;               // source offset of the construct being evaluated
  int call_depth = 0;                // nested macro calls, bounded to stop runaway recursion
  RenderBudget budget;
  std::vector<std::shared_ptr<NamespaceObject>> namespaces;  // every namespace() of the render
};

}  // namespace sluice::jinja
