// Many case-insensitive substrings searched at once: an Aho-Corasick automaton compiled into a
// dense table over byte classes (the bytes the patterns use, and one class for all others), so a
// text is scanned once, in time linear in its length, whatever the number of patterns — and no
// pattern can make a search blow up, as a regular expression could. Texts and patterns are
// compared after fold_for_matching: ASCII letters lower-cased, the typographic apostrophes and
// quotes (’ ‘ ” “) as ' and ", whitespace runs as one space.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// Returns text folded as described above.
std::string fold_for_matching(std::string_view text);

class SubstringMatcher {
 public:
  // The most pattern bytes one matcher takes (its table grows with them).
  static constexpr size_t kMaxPatternBytes = 64 * 1024;

  // Compiles patterns (folded here). Throws Error naming the pattern when one folds to "", or
  // when all together are longer than kMaxPatternBytes.
  explicit SubstringMatcher(const std::vector<std::string>& patterns);

  // Returns the index of the pattern whose first occurrence in text (folded here) ends first —
  // the lowest index when several end at the same byte — or nullopt.
  std::optional<size_t> find_first(std::string_view text) const;

  size_t num_patterns() const { return num_patterns_; }

 private:
  static constexpr uint32_t kNoPattern = UINT32_MAX;
  uint8_t class_of_[256] = {};  // byte -> class; 0: a byte no pattern has
  size_t num_classes_ = 1;
  std::vector<uint32_t> next_state_;  // [num_states, num_classes_]
  std::vector<uint32_t> output_;      // [num_states]: lowest pattern ending here, or kNoPattern
  size_t num_patterns_ = 0;
};

}  // namespace sluice
