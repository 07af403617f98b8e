#include "engine/runner/stop_strings.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "engine/core/error.h"

namespace sluice {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  for (size_t i = 0; i < stops_.size(); ++i) {
    // An empty stop string would match at every offset and end every request at once.
    if (stops_[i].empty()) fail("stop string ", i, " is empty");
  }
}

size_t StopStringMatcher::find(std::string_view text, size_t new_text_offset) const {
  const std::optional<StopStringMatch> match = find_match(text, new_text_offset);
  return match ? match->offset : std::string_view::npos;
}

std::optional<StopStringMatch> StopStringMatcher::find_match(std::string_view text,
                                                             size_t new_text_offset) const {
  assert(new_text_offset <= text.size());
  new_text_offset = std::min(new_text_offset, text.size());
  std::optional<StopStringMatch> earliest;
  for (size_t stop_idx = 0; stop_idx < stops_.size(); ++stop_idx) {
    const std::string& stop = stops_[stop_idx];
    // An occurrence at offset s ends after new_text_offset iff s + size > new_text_offset, so
    // the search starts size - 1 bytes before the new text: that finds boundary-spanning ones.
    const size_t search_from =
        new_text_offset >= stop.size() ? new_text_offset - stop.size() + 1 : 0;
    const size_t offset = text.find(stop, search_from);
    if (offset == std::string_view::npos) continue;
    // Strictly earlier: at equal offsets the stop string listed first stays.
    if (!earliest || offset < earliest->offset) earliest = StopStringMatch{offset, stop_idx};
  }
  return earliest;
}

size_t StopStringMatcher::num_held_back(std::string_view text) const {
  size_t num_held = 0;
  for (const std::string& stop : stops_) {
    const std::string_view stop_view(stop);
    // Only proper prefixes count: a whole stop string is find()'s business, not held text.
    // Longer candidates than the best so far are the only ones worth checking.
    const size_t longest = std::min(stop_view.size() - 1, text.size());
    for (size_t length = longest; length > num_held; --length) {
      if (text.ends_with(stop_view.substr(0, length))) {
        num_held = length;
        break;
      }
    }
  }
  return num_held;
}

}  // namespace sluice
