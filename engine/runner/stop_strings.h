// Finds a request's stop strings in its decoded output as the text grows token by token.
//
// The engine decodes the new tokens of a step, appends their text, and asks find() about the
// whole text together with where the new part begins: a stop string may span the boundary
// (its start in old text, its end in new text), so the search backs up by the longest stop
// string's length minus one, never further, and a step costs O(new text + longest stop) per
// stop string rather than O(whole text). When nothing matched, num_held_back() says how many
// trailing bytes might still become a stop string and must not be streamed yet.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// Where a stop string was found, and which one.
struct StopStringMatch {
  size_t offset = 0;    // byte offset in the text where the stop string begins
  size_t stop_idx = 0;  // index into the matcher's stop strings
};

class StopStringMatcher {
 public:
  // Takes the stop strings of one request. Throws sluice::Error if one of them is empty.
  explicit StopStringMatcher(std::vector<std::string> stops);

  // Returns the byte offset of the earliest occurrence, in text, of any stop string that ends
  // after new_text_offset (holds at least one byte of text[new_text_offset..]), or
  // std::string_view::npos. When text[0, new_text_offset) was searched before and held no stop
  // string, this is the earliest occurrence in the whole text: truncate the output there.
  // Precondition: new_text_offset <= text.size() (0 searches the whole text).
  size_t find(std::string_view text, size_t new_text_offset) const;

  // Like find(), and also says which stop string matched; at equal offsets the one listed
  // first wins. Returns nullopt when none matched.
  std::optional<StopStringMatch> find_match(std::string_view text, size_t new_text_offset) const;

  // Returns the number of trailing bytes of text that are a proper prefix of some stop string
  // (the longest such suffix): output that must be held back from streaming until more text
  // shows whether the stop string completes.
  size_t num_held_back(std::string_view text) const;

  // Returns true when the request has no stop strings (the engine can skip decoding checks).
  bool empty() const { return stops_.empty(); }

  // Returns the stop strings, in the order given.
  const std::vector<std::string>& stops() const { return stops_; }

 private:
  std::vector<std::string> stops_;
};

}  // namespace sluice
