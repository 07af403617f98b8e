// A grammar bound to a tokenizer's vocabulary, with the token masks that make constrained
// sampling cheap (the XGrammar idea): for each stack context — the top few frames of a parse
// stack (positions), kMaskContextFrames at most — every token is decided once by walking the
// vocabulary from that context alone, with a Sentinel under it standing for "whatever encloses
// these rules". Tokens consumed inside the context are accepted and tokens that fail inside it
// are rejected whatever the stack below holds; only the few that run past its bottom
// (Dependent) are checked against the real stack at each step. A context of more than the top
// frame matters: a string's characters are a one-character rule, so with the top frame alone
// nearly every token would leave it and be Dependent. Masks are computed on first use and
// cached within a byte budget shared by an engine's grammars (mask_cache_budget.h); one
// CompiledGrammar is shared by every request that uses it (the cache is guarded by a mutex).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_stack_arena.h"
#include "engine/grammar/mask_cache_budget.h"
#include "engine/grammar/token_vocabulary.h"

namespace sluice {

// How many top frames of a stack key its cached mask.
inline constexpr size_t kMaskContextFrames = 4;

// The tokens decided ahead of time for one stack context.
struct PositionMask {
  std::vector<uint32_t> accepted;  // [num_mask_words] bitmask of context-independent accepts
  std::vector<int32_t> dependent;  // ids to check against the real stack, in byte order
  int max_walk_depth = 0;          // deepest stack the walk made (the context's top included)
  int top_depth = 0;               // the depth of the context's top frame in the walk
  bool hit_depth_limit = false;    // the walk dropped stacks for depth: do not trust it
};

class CompiledGrammar {
 public:
  // budget: shared with other grammars; null for one of this grammar's own
  // (kDefaultMaskCacheBytes).
  CompiledGrammar(Grammar grammar, std::shared_ptr<const TokenVocabulary> vocabulary,
                  int max_depth = kDefaultMaxGrammarDepth,
                  std::shared_ptr<MaskCacheBudget> budget = nullptr);
  ~CompiledGrammar();
  CompiledGrammar(const CompiledGrammar&) = delete;
  CompiledGrammar& operator=(const CompiledGrammar&) = delete;

  const Grammar& grammar() const { return grammar_; }
  const TokenVocabulary& vocabulary() const { return *vocabulary_; }
  int max_depth() const { return max_depth_; }
  // Returns the mask of a stack context: positions are its frames from the top (a Chars
  // symbol) down; reaches_bottom says the stack holds nothing below them (no Sentinel then).
  // Computed on first use, and kept while the budget allows. Precondition: 1 <=
  // positions.size() <= kMaskContextFrames.
  std::shared_ptr<const PositionMask> context_mask(std::span<const uint32_t> positions,
                                                   bool reaches_bottom) const;
  // The bytes of the masks this grammar holds in its cache.
  size_t cached_mask_bytes() const;
  // The rank of each id in the vocabulary's byte order (-1 for ids that are never text).
  int32_t byte_order_rank(int32_t id) const { return byte_order_rank_[id]; }

 private:
  PositionMask compute_context_mask(std::span<const uint32_t> positions, bool reaches_bottom) const;

  Grammar grammar_;
  std::shared_ptr<const TokenVocabulary> vocabulary_;
  int max_depth_;
  std::vector<int32_t> byte_order_rank_;
  std::shared_ptr<MaskCacheBudget> budget_;
  mutable std::mutex mutex_;
  // Keyed by the context's positions from the top, then 1 when it reaches the bottom.
  mutable std::map<std::vector<uint32_t>, std::shared_ptr<const PositionMask>> masks_;
  mutable size_t cached_bytes_ = 0;  // taken from budget_ for masks_
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
