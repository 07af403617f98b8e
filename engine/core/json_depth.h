// Nesting limits for JSON from strangers' files. nlohmann's parser is iterative, but the values
// it builds are walked recursively afterwards (dump, field discovery, templates, copies), so a
// row nested 100,000 deep would overflow the stack there. Every reader of untrusted JSON checks
// the text first with find_json_nesting_past and reports where the limit was crossed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

// The deepest nesting of arrays and objects accepted anywhere Sluice reads JSON. Real files
// (datasets, config.json, tokenizer.json, job rows) stay far below it.
inline constexpr int kMaxJsonDepth = 256;

// Returns the byte offset of the first '[' or '{' (outside strings) that opens nesting level
// max_depth + 1, or nullopt when the text never nests deeper than max_depth. One linear pass;
// the text need not be valid JSON (the parser reports other errors).
std::optional<size_t> find_json_nesting_past(std::string_view text, int max_depth = kMaxJsonDepth);

// "line L, column C" (1-based; the column counts bytes) of a byte offset into text.
std::string text_position(std::string_view text, size_t offset);

}  // namespace sluice
