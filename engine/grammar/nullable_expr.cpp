#include "engine/grammar/nullable_expr.h"

#include <algorithm>
#include <utility>

namespace sluice {

bool is_nullable(const GrammarExpr& expr) {
  switch (expr.kind) {
    case GrammarExpr::Kind::Chars:
    case GrammarExpr::Kind::RuleRef:
      return false;
    case GrammarExpr::Kind::Sequence:
      return std::all_of(expr.children.begin(), expr.children.end(), is_nullable);
    case GrammarExpr::Kind::Choice:
      return std::any_of(expr.children.begin(), expr.children.end(), is_nullable);
    case GrammarExpr::Kind::Repeat:
      return expr.min_count == 0 || is_nullable(expr.children.at(0));
  }
  return false;
}

std::optional<GrammarExpr> non_empty_part(const GrammarExpr& expr) {
  if (!is_nullable(expr)) return expr;
  switch (expr.kind) {
    case GrammarExpr::Kind::Chars:
    case GrammarExpr::Kind::RuleRef:
      return expr;
    case GrammarExpr::Kind::Choice: {
      GrammarExpr out = expr;
      out.children.clear();
      for (const GrammarExpr& child : expr.children) {
        if (auto part = non_empty_part(child)) out.children.push_back(std::move(*part));
      }
      if (out.children.empty()) return std::nullopt;
      if (out.children.size() == 1) return std::move(out.children[0]);
      return out;
    }
    case GrammarExpr::Kind::Sequence: {
      // Every part can be empty: a non-empty sentence has a first non-empty part i, the parts
      // before it empty and the ones after it anything.
      GrammarExpr out;
      out.kind = GrammarExpr::Kind::Choice;
      for (size_t i = 0; i < expr.children.size(); ++i) {
        auto first = non_empty_part(expr.children[i]);
        if (!first) continue;
        GrammarExpr branch;
        branch.children.push_back(std::move(*first));
        for (size_t j = i + 1; j < expr.children.size(); ++j)
          branch.children.push_back(expr.children[j]);
        out.children.push_back(std::move(branch));
      }
      if (out.children.empty()) return std::nullopt;
      if (out.children.size() == 1) return std::move(out.children[0]);
      return out;
    }
    case GrammarExpr::Kind::Repeat: {
      // x{m,n} with x nullable or m = 0: one to n non-empty sentences of x.
      auto item = non_empty_part(expr.children.at(0));
      if (!item || expr.max_count == 0) return std::nullopt;
      GrammarExpr out = expr;
      out.children.at(0) = std::move(*item);
      out.min_count = 1;
      return out;
    }
  }
  return expr;
}

}  // namespace sluice
