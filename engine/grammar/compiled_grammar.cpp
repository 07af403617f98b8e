#include "engine/grammar/compiled_grammar.h"

#include <cassert>
#include <utility>

#include "engine/grammar/vocabulary_walk.h"

namespace sluice {

namespace {

// What a cached mask takes: its vectors, its key and the map's node.
size_t mask_bytes(const PositionMask& mask, const std::vector<uint32_t>& key) {
  return sizeof(PositionMask) + mask.accepted.size() * sizeof(uint32_t) +
         mask.dependent.size() * sizeof(int32_t) + key.size() * sizeof(uint32_t) + 96;
}

}  // namespace

CompiledGrammar::CompiledGrammar(Grammar grammar, std::shared_ptr<const TokenVocabulary> vocabulary,
                                 int max_depth, std::shared_ptr<MaskCacheBudget> budget)
    : grammar_(std::move(grammar)),
      vocabulary_(std::move(vocabulary)),
      max_depth_(max_depth),
      byte_order_rank_(static_cast<size_t>(vocabulary_->vocab_size()), -1),
      budget_(budget ? std::move(budget) : std::make_shared<MaskCacheBudget>()),
      walk_arena_(grammar_, max_depth) {
  auto sorted = vocabulary_->sorted_ids();
  for (size_t i = 0; i < sorted.size(); ++i) byte_order_rank_[sorted[i]] = static_cast<int32_t>(i);
}

CompiledGrammar::~CompiledGrammar() {
  budget_->release(cached_bytes_);
}

size_t CompiledGrammar::cached_mask_bytes() const {
  std::lock_guard lock(mutex_);
  return cached_bytes_;
}

std::shared_ptr<const PositionMask> CompiledGrammar::context_mask(
    std::span<const uint32_t> positions, bool reaches_bottom) const {
  assert(!positions.empty() && positions.size() <= kMaskContextFrames);  // precondition
  std::vector<uint32_t> key(positions.begin(), positions.end());
  key.push_back(reaches_bottom ? 1 : 0);
  std::lock_guard lock(mutex_);
  auto it = masks_.find(key);
  if (it != masks_.end()) return it->second;
  auto mask = std::make_shared<const PositionMask>(compute_context_mask(positions, reaches_bottom));
  const size_t bytes = mask_bytes(*mask, key);
  if (!budget_->try_reserve(bytes)) {
    // Spent (by this grammar or the others): start this grammar's cache again, or go uncached.
    masks_.clear();
    budget_->release(std::exchange(cached_bytes_, 0));
    if (!budget_->try_reserve(bytes)) return mask;
  }
  cached_bytes_ += bytes;
  masks_.emplace(std::move(key), mask);
  return mask;
}

PositionMask CompiledGrammar::compute_context_mask(std::span<const uint32_t> positions,
                                                   bool reaches_bottom) const {
  PositionMask mask;
  mask.accepted.assign(vocabulary_->num_mask_words(), 0);
  walk_arena_.rollback(0);
  walk_arena_.depth_exceeded = false;
  walk_arena_.too_many_stacks = false;
  int32_t node = -1;
  if (!reaches_bottom) node = walk_arena_.push_frame(Grammar::kSentinelPosition, -1);
  for (size_t i = positions.size(); i-- > 0;) node = walk_arena_.push_frame(positions[i], node);
  mask.top_depth = walk_arena_.depth(node);
  const int32_t stacks[] = {node};
  walk_tokens(walk_arena_, stacks, Utf8Decoder(), *vocabulary_, vocabulary_->sorted_ids(),
              [&](int32_t id, TokenVerdict verdict) {
                if (verdict == TokenVerdict::Accepted) set_token_bit(mask.accepted, id);
                if (verdict == TokenVerdict::Dependent) mask.dependent.push_back(id);
              });
  for (size_t i = 0; i < walk_arena_.mark(); ++i) {
    mask.max_walk_depth = std::max(mask.max_walk_depth, walk_arena_.depth(static_cast<int32_t>(i)));
  }
  mask.hit_depth_limit = walk_arena_.depth_exceeded || walk_arena_.too_many_stacks;
  walk_arena_.rollback(0);
  return mask;
}

}  // namespace sluice
