#include "engine/grammar/grammar_matcher.h"

#include <algorithm>
#include <cassert>

#include "engine/core/error.h"
#include "engine/grammar/vocabulary_walk.h"

namespace sluice {

GrammarMatcher::GrammarMatcher(std::shared_ptr<const CompiledGrammar> compiled)
    : compiled_(std::move(compiled)), arena_(compiled_->grammar(), compiled_->max_depth()) {
  stacks_ = arena_.root_stacks();
  if (stacks_.empty() && arena_.too_many_stacks) {
    fail("grammar: the root rule's parse can be in more than ", kMaxGrammarStacks,
         " states at once, the limit of one step of the matcher");
  }
  if (stacks_.empty()) fail("grammar: the root rule nests deeper than ", compiled_->max_depth());
  num_nodes_after_compact_ = arena_.mark();
}

bool GrammarMatcher::is_complete() const {
  return !is_terminated_ && !utf8_.is_pending() && !stacks_.empty() &&
         stacks_.front() == kAcceptedStack;
}

bool GrammarMatcher::can_continue() const {
  return !is_terminated_ && (stacks_.size() > 1 || (stacks_.size() == 1 && stacks_[0] >= 0));
}

bool GrammarMatcher::accept_token(int32_t id) {
  const TokenVocabulary& vocabulary = compiled_->vocabulary();
  if (id < 0 || id >= vocabulary.vocab_size()) {
    rejection_reason_ = str_cat("token ", id, " is outside the vocabulary");
    return false;
  }
  if (vocabulary.is_stop_token(id)) {
    if (!is_complete()) {
      rejection_reason_ = str_cat("stop token ", id, " before the grammar is complete");
      return false;
    }
    is_terminated_ = true;
    return true;
  }
  if (vocabulary.token_bytes(id).empty()) {
    rejection_reason_ = str_cat("token ", id, " is a special token");
    return false;
  }
  return accept_bytes(vocabulary.token_bytes(id));
}

bool GrammarMatcher::accept_bytes(std::string_view bytes) {
  if (is_terminated_) {
    rejection_reason_ = "the grammar already ended";
    return false;
  }
  size_t mark = arena_.mark();
  Utf8Decoder utf8 = utf8_;
  scratch_a_ = stacks_;
  arena_.depth_exceeded = arena_.too_many_stacks = false;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (!arena_.step_byte(scratch_a_, utf8, static_cast<uint8_t>(bytes[i]), scratch_b_, nullptr)) {
      if (arena_.depth_exceeded) {
        rejection_reason_ = str_cat("nesting deeper than ", compiled_->max_depth(), " levels");
      } else if (arena_.too_many_stacks) {
        rejection_reason_ = str_cat("the grammar is too ambiguous (more than ", kMaxGrammarStacks,
                                    " parses at once)");
      } else {
        rejection_reason_ = str_cat("byte ", i, " of the text is not allowed by the grammar");
      }
      arena_.rollback(mark);
      return false;
    }
    std::swap(scratch_a_, scratch_b_);
  }
  stacks_ = scratch_a_;
  utf8_ = utf8;
  // Nodes of stacks that died stay in the arena; a long output would keep all of them.
  if (arena_.mark() > std::max(kMinNodesToCompact, 4 * num_nodes_after_compact_)) {
    arena_.compact(stacks_);
    num_nodes_after_compact_ = arena_.mark();
  }
  return true;
}

void GrammarMatcher::set_stop_bits(std::span<uint32_t> mask) const {
  if (!is_complete()) return;
  for (int32_t id : compiled_->vocabulary().stop_ids()) set_token_bit(mask, id);
}

void GrammarMatcher::fill_next_token_mask_by_walk(std::span<uint32_t> mask) {
  const TokenVocabulary& vocabulary = compiled_->vocabulary();
  assert(mask.size() >= vocabulary.num_mask_words());  // precondition
  std::fill(mask.begin(), mask.end(), 0);
  if (is_terminated_) return;
  size_t mark = arena_.mark();
  walk_tokens(arena_, stacks_, utf8_, vocabulary, vocabulary.sorted_ids(),
              [&](int32_t id, TokenVerdict verdict) {
                if (verdict == TokenVerdict::Accepted) set_token_bit(mask, id);
              });
  arena_.rollback(mark);
  set_stop_bits(mask);
}

void GrammarMatcher::fill_next_token_mask(std::span<uint32_t> mask) {
  const TokenVocabulary& vocabulary = compiled_->vocabulary();
  assert(mask.size() >= vocabulary.num_mask_words());  // precondition
  if (is_terminated_ || utf8_.is_pending()) {
    // In the middle of a character the cached masks (made at character boundaries) do not apply.
    fill_next_token_mask_by_walk(mask);
    return;
  }
  std::fill(mask.begin(), mask.end(), 0);
  candidates_.clear();
  for (int32_t stack : stacks_) {
    if (stack < 0) continue;
    context_.clear();
    bool reaches_bottom = false;
    for (int32_t node = stack; context_.size() < kMaskContextFrames;) {
      context_.push_back(arena_.position(node));
      node = arena_.parent(node);
      if (node < 0) {
        reaches_bottom = true;
        break;
      }
    }
    const std::shared_ptr<const PositionMask> held =
        compiled_->context_mask(context_, reaches_bottom);
    const PositionMask& cached = *held;
    // The cached walk pushed max_walk_depth - top_depth frames above this one; past the limit
    // the real matcher would drop them, so the cache would promise too much.
    if (cached.hit_depth_limit ||
        arena_.depth(stack) + cached.max_walk_depth - cached.top_depth > compiled_->max_depth()) {
      fill_next_token_mask_by_walk(mask);
      return;
    }
    for (size_t w = 0; w < cached.accepted.size(); ++w) mask[w] |= cached.accepted[w];
    candidates_.insert(candidates_.end(), cached.dependent.begin(), cached.dependent.end());
  }
  std::erase_if(candidates_, [&](int32_t id) { return test_token_bit(mask, id); });
  if (!candidates_.empty()) {
    std::sort(candidates_.begin(), candidates_.end(), [&](int32_t a, int32_t b) {
      return compiled_->byte_order_rank(a) < compiled_->byte_order_rank(b);
    });
    candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());
    size_t mark = arena_.mark();
    walk_tokens(arena_, stacks_, utf8_, vocabulary, candidates_,
                [&](int32_t id, TokenVerdict verdict) {
                  if (verdict == TokenVerdict::Accepted) set_token_bit(mask, id);
                });
    arena_.rollback(mark);
  }
  set_stop_bits(mask);
}

bool grammar_accepts_text(const Grammar& grammar, std::string_view text) {
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  auto vocabulary = std::make_shared<TokenVocabulary>(std::move(bytes), std::vector<int32_t>{});
  GrammarMatcher matcher(std::make_shared<CompiledGrammar>(grammar, std::move(vocabulary)));
  return matcher.accept_bytes(text) && matcher.is_complete();
}

}  // namespace sluice
