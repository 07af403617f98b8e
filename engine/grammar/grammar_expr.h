// The grammar as front ends write it: named rules whose bodies are expressions of sequences,
// alternatives, repetition, character classes and references to other rules. Grammar lowers
// these to flat rules for the matcher (grammar.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/grammar/char_class.h"

namespace sluice {

inline constexpr uint32_t kUnboundedRepeat = UINT32_MAX;

struct GrammarExpr {
  enum class Kind : uint8_t { Sequence, Choice, Chars, RuleRef, Repeat };
  Kind kind = Kind::Sequence;         // an empty Sequence matches the empty string
  std::vector<GrammarExpr> children;  // Sequence, Choice: the parts; Repeat: the one repeated
  CharClass chars;                    // Chars
  std::string rule_name;              // RuleRef
  uint32_t min_count = 0;             // Repeat
  uint32_t max_count = 0;             // Repeat; kUnboundedRepeat for no upper bound
  size_t line = 0;                    // where it was written (1-based; 0 when generated)
  size_t column = 0;
};

struct GrammarRuleDef {
  std::string name;
  GrammarExpr body;
  size_t line = 0;  // where the rule is defined (1-based; 0 when generated)
  size_t column = 0;
};

}  // namespace sluice
