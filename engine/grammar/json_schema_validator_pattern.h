// A JSON Schema `pattern`: an ECMA-262 regular expression searched for anywhere in a string
// (unanchored unless it starts with ^ or ends with $). It runs on the project's own regex engine
// (regex_grammar.h: a grammar over code points matched by GrammarMatcher, linear in the string,
// no recursion), wrapped as [\s\S]*(?:re)[\s\S]*, with `.` and \s rewritten to ECMA-262's
// classes first. A pattern that engine refuses (word boundaries, lookaround, backreferences,
// control escapes) or whose anchors sit inside a group falls back to std::regex
// (ECMAScript), which recurses per character: it is only run on strings up to
// kMaxStdRegexSubjectBytes, and a longer string is reported as not checkable.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/grammar/compiled_grammar.h"

namespace sluice {

// The longest string std::regex is run on (its matcher recurses per character).
inline constexpr size_t kMaxStdRegexSubjectBytes = 4096;

class JsonSchemaPattern {
 public:
  // Returns the compiled pattern. Throws sluice::Error "<where>: pattern ...: <problem>" when
  // neither engine accepts it.
  static std::shared_ptr<const JsonSchemaPattern> compile(const std::string& pattern,
                                                          const std::string& where);

  // Returns whether the pattern matches somewhere in text (UTF-8), or nullopt when it cannot be
  // decided (the std::regex fallback and a string past kMaxStdRegexSubjectBytes, or the matcher's
  // per-step budget spent). Thread-safe.
  std::optional<bool> search(std::string_view text) const;

  const std::string& text() const { return pattern_; }

 private:
  std::string pattern_;
  std::shared_ptr<const CompiledGrammar> grammar_;  // null when std_regex_ is used
  // The std::regex fallback, kept out of this header (only the .cpp instantiates <regex>).
  struct StdRegex;
  std::shared_ptr<const StdRegex> std_regex_;
};

}  // namespace sluice
