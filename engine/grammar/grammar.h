// A context-free grammar over Unicode code points in the flat form the matcher walks: each rule
// is a list of alternatives, each alternative a run of symbols (a character class or a rule
// reference) ended by an End symbol, all stored in one array so that a parse position is one
// index. Repetition is lowered to right-recursive helper rules, so the matcher's stacks stay flat
// on long repeats. Left recursion is refused when the grammar is built (the matcher would loop).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/grammar/char_class.h"
#include "engine/grammar/grammar_budget.h"
#include "engine/grammar/grammar_expr.h"

namespace sluice {

enum class GrammarSymbolKind : uint8_t {
  End,       // the end of an alternative: return to the rule that referred to this one
  Chars,     // one code point of char_class(value)
  RuleRef,   // the rule value
  Sentinel,  // bottom of a stack in mask precomputation: "the enclosing rule continues here"
};

struct GrammarSymbol {
  GrammarSymbolKind kind = GrammarSymbolKind::End;
  uint32_t value = 0;
};

class Grammar {
 public:
  // Returns the grammar of rules with root rule root_name. Alternatives of a rule that start
  // with the same character class share it (a trie: a choice among 10,000 strings parses as
  // one stack, not 10,000). Throws sluice::Error naming source_name and the rule (with its line
  // and column when known) for a reference to an undefined rule, a rule defined twice, left
  // recursion, a missing root, a repeat count past kMaxGrammarRepeat, a grammar past
  // kMaxGrammarSymbols, or a rule whose closure passes kMaxGrammarStacks (grammar_budget.h).
  static Grammar from_rules(const std::vector<GrammarRuleDef>& rules, const std::string& root_name,
                            const std::string& source_name);

  const GrammarSymbol& symbol(uint32_t position) const { return symbols_[position]; }
  const CharClass& char_class(uint32_t class_idx) const { return char_classes_[class_idx]; }
  // Returns the start position of each alternative of rule_idx.
  std::span<const uint32_t> alternatives(uint32_t rule_idx) const {
    return rule_alternatives_[rule_idx];
  }
  uint32_t root_rule() const { return root_rule_; }
  // The position of the one Sentinel symbol.
  static constexpr uint32_t kSentinelPosition = 0;
  size_t num_positions() const { return symbols_.size(); }
  size_t num_rules() const { return rule_alternatives_.size(); }
  // The name of the rule as written (a helper rule made by lowering has its parent's name).
  const std::string& rule_name(uint32_t rule_idx) const { return rule_names_[rule_idx]; }

  // What the compile from its source ignored or dropped, one line each ("/properties/a/x-order:
  // unknown keyword ('x-order' ignored)"): shown once per job, by `grammar check` and in logs.
  const std::vector<std::string>& notes() const { return notes_; }
  void set_notes(std::vector<std::string> notes) { notes_ = std::move(notes); }

 private:
  friend class GrammarLowering;
  std::vector<GrammarSymbol> symbols_;
  std::vector<CharClass> char_classes_;
  std::vector<std::vector<uint32_t>> rule_alternatives_;
  std::vector<std::string> rule_names_;
  uint32_t root_rule_ = 0;
  std::vector<std::string> notes_;
};

}  // namespace sluice
