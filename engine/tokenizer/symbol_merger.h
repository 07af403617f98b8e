// Greedy pairwise merging, the core shared by the SentencePiece-style encoders (merge the pair
// whose merged piece has the best score) and byte-level BPE (merge the pair with the lowest
// merge rank). Both reduce to: repeatedly merge the adjacent pair with the highest priority,
// ties going to the leftmost pair, until no adjacent pair may merge. A heap of candidate pairs
// with lazy invalidation makes that O(n log n) instead of llama2.c's O(n^2) rescans, with the
// same result: the best valid pair is always on top and ties order by position.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// Returns the priority of merging left and right (higher merges first), or nullopt when the
// pair may not merge.
using PairPriority =
    std::function<std::optional<double>(std::string_view left, std::string_view right)>;

// Merges adjacent symbols by priority until no pair may merge; returns the symbols in order.
std::vector<std::string> merge_symbols(std::vector<std::string> symbols,
                                       const PairPriority& priority);

}  // namespace sluice
