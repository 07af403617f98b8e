#include "engine/grammar/grammar.h"

#include <map>
#include <optional>
#include <unordered_map>

#include "engine/core/error.h"
#include "engine/grammar/grammar_ambiguity_check.h"
#include "engine/grammar/nullable_expr.h"

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
      current_line_ = def.line;
      current_column_ = def.column;
      rules_[rule_idx] = lower_choice(def.body, def.name);
    }
    check_left_recursion();
    // Helper rules made by factoring are appended, and factored in their turn.
    for (uint32_t rule_idx = 0; rule_idx < rules_.size(); ++rule_idx)
      factor_common_starts(rule_idx);
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

  // Counts num_symbols more symbols of the lowered grammar (an alternative's End included) and
  // refuses the grammar past kMaxGrammarSymbols: checked as repeats are written out, so a
  // grammar that would not fit is refused before it takes the memory.
  void charge(size_t num_symbols) {
    num_symbols_ += num_symbols;
    if (num_symbols_ > kMaxGrammarSymbols) {
      fail(where(source_name_, current_line_, current_column_), ": the grammar grows past ",
           kMaxGrammarSymbols, " symbols once its repeats are written out (rule '", current_rule_,
           "'); the limit bounds a grammar's memory and compile time");
    }
  }

  // Rewrites rule_idx's alternatives that start with the same character class as one
  // alternative, that class then a helper rule of their remainders (left factoring). A choice
  // among many strings becomes a trie, so the parse after each character holds the strings
  // still possible under one stack instead of one stack per string. The language is unchanged.
  void factor_common_starts(uint32_t rule_idx) {
    const std::vector<Alternative> alternatives = rules_[rule_idx];  // new rules move rules_
    std::map<uint32_t, std::vector<size_t>> by_first_class;
    for (size_t i = 0; i < alternatives.size(); ++i) {
      const Alternative& alternative = alternatives[i];
      if (!alternative.empty() && alternative[0].kind == GrammarSymbolKind::Chars)
        by_first_class[alternative[0].value].push_back(i);
    }
    bool has_shared_start = false;
    for (const auto& [class_idx, members] : by_first_class) has_shared_start |= members.size() > 1;
    if (!has_shared_start) return;
    std::vector<Alternative> factored;
    for (size_t i = 0; i < alternatives.size(); ++i) {
      const Alternative& alternative = alternatives[i];
      if (alternative.empty() || alternative[0].kind != GrammarSymbolKind::Chars) {
        factored.push_back(alternative);
        continue;
      }
      const std::vector<size_t>& members = by_first_class[alternative[0].value];
      if (members.size() == 1) {
        factored.push_back(alternative);
      } else if (members.front() == i) {
        std::vector<Alternative> remainders;
        for (size_t member : members)
          remainders.emplace_back(alternatives[member].begin() + 1, alternatives[member].end());
        charge(2);  // the remainders' rule reuses their symbols: a reference and an End more
        const uint32_t rest = new_helper_rule(display_name(rule_idx), std::move(remainders));
        factored.push_back({alternative[0], {GrammarSymbolKind::RuleRef, rest}});
      }
    }
    rules_[rule_idx] = std::move(factored);
  }

  uint32_t class_index(const CharClass& chars) {
    auto [it, inserted] = class_index_.try_emplace(chars.ranges(), char_classes_.size());
    if (inserted) char_classes_.push_back(chars);
    return static_cast<uint32_t>(it->second);
  }

  std::vector<Alternative> lower_choice(const GrammarExpr& expr, const std::string& base) {
    current_rule_ = base;
    std::vector<Alternative> alternatives;
    if (expr.kind == GrammarExpr::Kind::Choice) {
      for (const auto& child : expr.children) {
        charge(1);  // the alternative's End
        alternatives.emplace_back();
        lower_sequence(child, base, alternatives.back());
      }
    } else {
      charge(1);
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
        charge(1);
        out.push_back({GrammarSymbolKind::Chars, class_index(expr.chars)});
        return;
      case GrammarExpr::Kind::RuleRef: {
        auto it = rule_index_.find(expr.rule_name);
        if (it == rule_index_.end()) {
          fail(where(source_name_, expr.line, expr.column), ": rule '", base,
               "' refers to undefined rule '", expr.rule_name, "'");
        }
        charge(1);
        out.push_back({GrammarSymbolKind::RuleRef, it->second});
        return;
      }
      case GrammarExpr::Kind::Choice:
        charge(1);
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
    current_line_ = expr.line;
    current_column_ = expr.column;
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
    const GrammarExpr* repeated = &expr.children.at(0);
    uint32_t min_count = expr.min_count;
    std::optional<GrammarExpr> non_empty;
    if (max_count == kUnboundedRepeat && is_nullable(*repeated)) {
      // x{m,} with x nullable is (x without its empty sentence)*: the same strings, and no rule
      // that refers to itself before matching a character.
      non_empty = non_empty_part(*repeated);
      if (!non_empty) return;  // x matches only the empty string
      repeated = &*non_empty;
      min_count = 0;
    }
    Alternative item;
    lower_sequence(*repeated, base, item);
    if (item.size() != 1) {
      charge(1);  // the End of the item's own rule (its symbols are counted)
      uint32_t idx = new_helper_rule(base, {item});
      item = {{GrammarSymbolKind::RuleRef, idx}};
    }
    charge(min_count);
    for (uint32_t i = 0; i < min_count; ++i) out.push_back(item[0]);
    if (max_count == kUnboundedRepeat) {
      charge(5);  // star ::= x star | (empty), with their Ends, and the reference to star
      uint32_t star = new_rule(str_cat(base, "_", rules_.size()));
      rules_[star] = {{item[0], {GrammarSymbolKind::RuleRef, star}}, {}};
      out.push_back({GrammarSymbolKind::RuleRef, star});
      return;
    }
    if (max_count == min_count) return;
    charge(4);  // optional ::= x | (empty), with their Ends, and the reference to it
    uint32_t optional = new_helper_rule(base, {{item[0]}, {}});
    for (uint32_t i = min_count + 1; i < max_count; ++i) {
      charge(4);  // optional ::= x optional | (empty), with their Ends
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
    grammar.rule_names_.reserve(rules_.size());
    for (uint32_t r = 0; r < rules_.size(); ++r) grammar.rule_names_.push_back(display_name(r));
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
  size_t num_symbols_ = 2;  // the Sentinel and its End
  // Where the lowering is, for the size error: the rule and the last repeat or rule definition.
  std::string current_rule_;
  size_t current_line_ = 0;
  size_t current_column_ = 0;
};

Grammar Grammar::from_rules(const std::vector<GrammarRuleDef>& rules, const std::string& root_name,
                            const std::string& source_name) {
  Grammar grammar = GrammarLowering(rules, source_name).run(root_name);
  check_grammar_ambiguity(grammar, source_name);
  return grammar;
}

}  // namespace sluice
