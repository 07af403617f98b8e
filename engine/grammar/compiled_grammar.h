// A grammar bound to a tokenizer's vocabulary, with the per-position token masks that make
// constrained sampling cheap (the XGrammar idea): for each grammar position a stack top can be
// at, every token is decided once by walking the vocabulary from that position alone, with a
// Sentinel under it standing for "whatever encloses this rule". Tokens consumed inside the rule
// are accepted and tokens that fail inside it are rejected whatever the stack below holds; only
// the few that run past the rule's end (Dependent) are checked against the real stack at each
// step. Masks are computed on first use and cached; one CompiledGrammar is shared by every
// request that uses it (the cache is guarded by a mutex).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_stack_arena.h"
#include "engine/grammar/token_vocabulary.h"

namespace sluice {

// How deep the matcher's stacks may nest by default (JSON nesting costs about two levels each).
inline constexpr int kDefaultMaxGrammarDepth = 200;

// The tokens decided ahead of time for one grammar position.
struct PositionMask {
  std::vector<uint32_t> accepted;  // [num_mask_words] bitmask of context-independent accepts
  std::vector<int32_t> dependent;  // ids to check against the real stack, in byte order
  int max_walk_depth = 0;          // deepest stack the walk made (Sentinel = 1, position = 2)
  bool hit_depth_limit = false;    // the walk dropped stacks for depth: do not trust it
};

class CompiledGrammar {
 public:
  CompiledGrammar(Grammar grammar, std::shared_ptr<const TokenVocabulary> vocabulary,
                  int max_depth = kDefaultMaxGrammarDepth);

  const Grammar& grammar() const { return grammar_; }
  const TokenVocabulary& vocabulary() const { return *vocabulary_; }
  int max_depth() const { return max_depth_; }
  // Returns the mask of grammar position (a Chars symbol), computing it on first use.
  const PositionMask& position_mask(uint32_t position) const;
  // The rank of each id in the vocabulary's byte order (-1 for ids that are never text).
  int32_t byte_order_rank(int32_t id) const { return byte_order_rank_[id]; }

 private:
  PositionMask compute_position_mask(uint32_t position) const;

  Grammar grammar_;
  std::shared_ptr<const TokenVocabulary> vocabulary_;
  int max_depth_;
  std::vector<int32_t> byte_order_rank_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<uint32_t, std::unique_ptr<PositionMask>> masks_;
  mutable GrammarStackArena walk_arena_;
};

// Sets bit id of a token bitmask.
inline void set_token_bit(std::span<uint32_t> mask, int32_t id) {
  mask[static_cast<size_t>(id) >> 5] |= uint32_t{1} << (id & 31);
}
inline bool test_token_bit(std::span<const uint32_t> mask, int32_t id) {
  return (mask[static_cast<size_t>(id) >> 5] >> (id & 31)) & 1;
}

}  // namespace sluice
