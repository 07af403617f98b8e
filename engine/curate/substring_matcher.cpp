#include "engine/curate/substring_matcher.h"

#include <algorithm>
#include <deque>

#include "engine/core/error.h"

namespace sluice {

namespace {

bool is_ascii_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// The typographic quote starting at text[i] (U+2018/2019/201C/201D, E2 80 98..9D), folded, or 0.
char folded_quote(std::string_view text, size_t i) {
  if (i + 2 >= text.size() || static_cast<unsigned char>(text[i]) != 0xE2 ||
      static_cast<unsigned char>(text[i + 1]) != 0x80)
    return 0;
  switch (static_cast<unsigned char>(text[i + 2])) {
    case 0x98:
    case 0x99:
      return '\'';
    case 0x9C:
    case 0x9D:
      return '"';
    default:
      return 0;
  }
}

}  // namespace

std::string fold_for_matching(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (is_ascii_space(c)) {
      if (out.empty() || out.back() != ' ') out.push_back(' ');
    } else if (const char quote = folded_quote(text, i)) {
      out.push_back(quote);
      i += 2;
    } else {
      out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : text[i]);
    }
  }
  return out;
}

SubstringMatcher::SubstringMatcher(const std::vector<std::string>& patterns)
    : num_patterns_(patterns.size()) {
  std::vector<std::string> folded;
  size_t total_bytes = 0;
  for (size_t p = 0; p < patterns.size(); ++p) {
    folded.push_back(fold_for_matching(patterns[p]));
    if (folded.back().empty() || folded.back() == " ")
      fail("pattern ", p + 1, " (\"", patterns[p], "\") matches every text: it has no characters");
    total_bytes += folded.back().size();
  }
  if (total_bytes > kMaxPatternBytes)
    fail(patterns.size(), " patterns of ", total_bytes, " bytes in all, over the limit of ",
         kMaxPatternBytes);
  for (const std::string& pattern : folded) {
    for (const char c : pattern) {
      uint8_t& cls = class_of_[static_cast<unsigned char>(c)];
      if (cls == 0) cls = static_cast<uint8_t>(num_classes_++);
    }
  }
  // The trie; 0 is "no edge" while building (the root is state 0 and never a child).
  const size_t width = num_classes_;
  next_state_.assign(width, 0);
  output_.assign(1, kNoPattern);
  for (size_t p = 0; p < folded.size(); ++p) {
    uint32_t state = 0;
    for (const char c : folded[p]) {
      const size_t edge = state * width + class_of_[static_cast<unsigned char>(c)];
      if (next_state_[edge] == 0) {
        next_state_[edge] = static_cast<uint32_t>(output_.size());
        output_.push_back(kNoPattern);
        next_state_.resize(next_state_.size() + width, 0);
      }
      state = next_state_[edge];
    }
    output_[state] = std::min(output_[state], static_cast<uint32_t>(p));
  }
  // Breadth first: failure links, missing edges filled from the failure state (a DFA), outputs
  // merged down the failure chain.
  std::vector<uint32_t> failure(output_.size(), 0);
  std::deque<uint32_t> queue;
  for (size_t cls = 0; cls < width; ++cls) {
    if (next_state_[cls] != 0) queue.push_back(next_state_[cls]);
  }
  while (!queue.empty()) {
    const uint32_t state = queue.front();
    queue.pop_front();
    output_[state] = std::min(output_[state], output_[failure[state]]);
    for (size_t cls = 0; cls < width; ++cls) {
      uint32_t& child = next_state_[state * width + cls];
      const uint32_t via_failure = next_state_[failure[state] * width + cls];
      if (child == 0) {
        child = via_failure;
      } else {
        failure[child] = via_failure;
        queue.push_back(child);
      }
    }
  }
}

std::optional<size_t> SubstringMatcher::find_first(std::string_view text) const {
  if (num_patterns_ == 0) return std::nullopt;
  const std::string folded = fold_for_matching(text);
  uint32_t state = 0;
  for (const char c : folded) {
    state = next_state_[state * num_classes_ + class_of_[static_cast<unsigned char>(c)]];
    if (output_[state] != kNoPattern) return output_[state];
  }
  return std::nullopt;
}

}  // namespace sluice
