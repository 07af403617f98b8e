#include "engine/grammar/grammar.h"

#include <map>
#include <unordered_map>

#include "engine/core/error.h"

namespace sluice {
namespace {

struct LoweredSymbol {
  GrammarSymbolKind kind;
  uint32_t value;  // class index or rule index
};
using Alternative = std::vector<LoweredSymbol>;

std::string where(const std::string& source_name, size_t line, size_t column) {
  if (line == 0) return source_name;
  return str_cat(source_name, ":", line, ":", column);
}

}  // namespace

// Lowers rule expressions to flat alternatives: nested choices and repeats become helper rules.
class GrammarLowering {
 public:
  GrammarLowering(const std::vector<GrammarRuleDef>& rules, std::string source_name)
      : defs_(rules), source_name_(std::move(source_name)) {}

  Grammar run(const std::string& root_name) {
    for (const auto& def : defs_) {
      if (rule_index_.count(def.name) != 0) {
        fail(where(source_name_, def.line, def.column), ": rule '", def.name, "' is defined twice");
      }
      rule_index_[def.name] = new_rule(def.name);
    }
    auto root = rule_index_.find(root_name);
    if (root == rule_index_.end()) fail(source_name_, ": no rule named '", root_name, "'");
    for (const auto& def : defs_) {
      uint32_t rule_idx = rule_index_[def.name];
      rules_[rule_idx] = lower_choice(def.body, def.name);
    }
    check_left_recursion();
    return flatten(root->second);
  }

 private:
  uint32_t new_rule(const std::string& name) {
    rules_.emplace_back();
    names_.push_back(name);
    return static_cast<uint32_t>(rules_.size() - 1);
  }

  uint32_t new_helper_rule(const std::string& base, std::vector<Alternative> alternatives) {
    uint32_t idx = new_rule(str_cat(base, "_", rules_.size()));
    rules_[idx] = std::move(alternatives);
    return idx;
  }

  uint32_t class_index(const CharClass& chars) {
    auto [it, inserted] = class_index_.try_emplace(chars.ranges(), char_classes_.size());
    if (inserted) char_classes_.push_back(chars);
    return static_cast<uint32_t>(it->second);
  }

  std::vector<Alternative> lower_choice(const GrammarExpr& expr, const std::string& base) {
    std::vector<Alternative> alternatives;
    if (expr.kind == GrammarExpr::Kind::Choice) {
      for (const auto& child : expr.children) {
        alternatives.emplace_back();
        lower_sequence(child, base, alternatives.back());
      }
    } else {
      alternatives.emplace_back();
      lower_sequence(expr, base, alternatives.back());
    }
    return alternatives;
  }

  void lower_sequence(const GrammarExpr& expr, const std::string& base, Alternative& out) {
    switch (expr.kind) {
      case GrammarExpr::Kind::Sequence:
        for (const auto& child : expr.children) lower_sequence(child, base, out);
        return;
      case GrammarExpr::Kind::Chars:
        if (expr.chars.empty()) {
          fail(where(source_name_, expr.line, expr.column), ": rule '", base,
               "' has a character class that matches nothing");
        }
        out.push_back({GrammarSymbolKind::Chars, class_index(expr.chars)});
        return;
      case GrammarExpr::Kind::RuleRef: {
        auto it = rule_index_.find(expr.rule_name);
        if (it == rule_index_.end()) {
          fail(where(source_name_, expr.line, expr.column), ": rule '", base,
               "' refers to undefined rule '", expr.rule_name, "'");
        }
        out.push_back({GrammarSymbolKind::RuleRef, it->second});
        return;
      }
      case GrammarExpr::Kind::Choice:
        out.push_back(
            {GrammarSymbolKind::RuleRef, new_helper_rule(base, lower_choice(expr, base))});
        return;
      case GrammarExpr::Kind::Repeat:
        lower_repeat(expr, base, out);
        return;
    }
  }

  // x{m,n}: m copies of x, then n - m nested optionals (or one right-recursive star).
  void lower_repeat(const GrammarExpr& expr, const std::string& base, Alternative& out) {
    uint32_t max_count = expr.max_count;
    if (expr.min_count > kMaxGrammarRepeat ||
        (max_count != kUnboundedRepeat && max_count > kMaxGrammarRepeat)) {
      fail(where(source_name_, expr.line, expr.column), ": rule '", base, "' repeats ",
           max_count == kUnboundedRepeat ? expr.min_count : max_count, " times, past the limit of ",
           kMaxGrammarRepeat);
    }
    if (max_count != kUnboundedRepeat && max_count < expr.min_count) {
      fail(where(source_name_, expr.line, expr.column), ": rule '", base, "' has a repeat {",
           expr.min_count, ",", max_count, "} whose maximum is below its minimum");
    }
    Alternative item;
    lower_sequence(expr.children.at(0), base, item);
    if (item.size() != 1) {
      uint32_t idx = new_helper_rule(base, {item});
      item = {{GrammarSymbolKind::RuleRef, idx}};
    }
    for (uint32_t i = 0; i < expr.min_count; ++i) out.push_back(item[0]);
    if (max_count == kUnboundedRepeat) {
      uint32_t star = new_rule(str_cat(base, "_", rules_.size()));
      rules_[star] = {{item[0], {GrammarSymbolKind::RuleRef, star}}, {}};
      out.push_back({GrammarSymbolKind::RuleRef, star});
      return;
    }
    if (max_count == expr.min_count) return;
    uint32_t optional = new_helper_rule(base, {{item[0]}, {}});
    for (uint32_t i = expr.min_count + 1; i < max_count; ++i) {
      optional = new_helper_rule(base, {{item[0], {GrammarSymbolKind::RuleRef, optional}}, {}});
    }
    out.push_back({GrammarSymbolKind::RuleRef, optional});
  }

  // A rule that can reach itself without consuming input would make the matcher expand forever.
  void check_left_recursion() {
    std::vector<bool> nullable(rules_.size(), false);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t r = 0; r < rules_.size(); ++r) {
        if (nullable[r]) continue;
        for (const auto& alt : rules_[r]) {
          bool all = true;
          for (const auto& s : alt) {
            if (s.kind != GrammarSymbolKind::RuleRef || !nullable[s.value]) {
              all = false;
              break;
            }
          }
          if (all) {
            nullable[r] = changed = true;
            break;
          }
        }
      }
    }
    std::vector<std::vector<uint32_t>> left_edges(rules_.size());
    for (size_t r = 0; r < rules_.size(); ++r) {
      for (const auto& alt : rules_[r]) {
        for (const auto& s : alt) {
          if (s.kind != GrammarSymbolKind::RuleRef) break;
          left_edges[r].push_back(s.value);
          if (!nullable[s.value]) break;
        }
      }
    }
    // Iterative depth-first search for a cycle (0 unvisited, 1 on the path, 2 done).
    std::vector<uint8_t> state(rules_.size(), 0);
    for (uint32_t start = 0; start < rules_.size(); ++start) {
      if (state[start] != 0) continue;
      std::vector<std::pair<uint32_t, size_t>> path = {{start, 0}};
      state[start] = 1;
      while (!path.empty()) {
        auto& [rule, next] = path.back();
        if (next == left_edges[rule].size()) {
          state[rule] = 2;
          path.pop_back();
          continue;
        }
        uint32_t target = left_edges[rule][next++];
        if (state[target] == 1) {
          fail(source_name_, ": rule '", display_name(target),
               "' is left-recursive (it can refer to itself before matching any character)");
        }
        if (state[target] == 0) {
          state[target] = 1;
          path.emplace_back(target, 0);
        }
      }
    }
  }

  // Helper rules are named base_N; the user knows base.
  std::string display_name(uint32_t rule_idx) const {
    const std::string& name = names_[rule_idx];
    if (rule_idx < defs_.size()) return name;
    return name.substr(0, name.rfind('_'));
  }

  Grammar flatten(uint32_t root_rule) {
    Grammar grammar;
    grammar.symbols_.push_back({GrammarSymbolKind::Sentinel, 0});
    grammar.symbols_.push_back({GrammarSymbolKind::End, 0});
    grammar.rule_alternatives_.resize(rules_.size());
    for (size_t r = 0; r < rules_.size(); ++r) {
      for (const auto& alt : rules_[r]) {
        grammar.rule_alternatives_[r].push_back(static_cast<uint32_t>(grammar.symbols_.size()));
        for (const auto& s : alt) grammar.symbols_.push_back({s.kind, s.value});
        grammar.symbols_.push_back({GrammarSymbolKind::End, 0});
      }
    }
    grammar.char_classes_ = std::move(char_classes_);
    grammar.rule_names_ = std::move(names_);
    grammar.root_rule_ = root_rule;
    return grammar;
  }

  const std::vector<GrammarRuleDef>& defs_;
  std::string source_name_;
  std::unordered_map<std::string, uint32_t> rule_index_;
  std::vector<std::vector<Alternative>> rules_;
  std::vector<std::string> names_;
  std::vector<CharClass> char_classes_;
  std::map<std::vector<std::pair<uint32_t, uint32_t>>, size_t> class_index_;
};

Grammar Grammar::from_rules(const std::vector<GrammarRuleDef>& rules, const std::string& root_name,
                            const std::string& source_name) {
  return GrammarLowering(rules, source_name).run(root_name);
}

}  // namespace sluice
