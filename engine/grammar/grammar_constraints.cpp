#include "engine/grammar/grammar_constraints.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <chrono>
#include <cstddef>
#include <iterator>
#include <limits>

namespace sluice {

const std::shared_ptr<const TokenVocabulary>& GrammarConstraints::vocabulary() {
  if (!vocabulary_) vocabulary_ = TokenVocabulary::from_tokenizer(*tokenizer_);
  return vocabulary_;
}

std::shared_ptr<GrammarMatcher> GrammarConstraints::make_matcher(
    const std::shared_ptr<const Grammar>& grammar) {
  // Forget the grammars nothing else holds any more (no request, no matcher, no caller): a
  // server sees new grammars for as long as it runs. Once the masks take half their budget,
  // those no matcher uses go too, though a caller (a server's cache of grammars) keeps them.
  const bool is_budget_tight = mask_budget_->used_bytes() > mask_budget_->max_bytes() / 2;
  for (auto entry = compiled_.begin(); entry != compiled_.end();) {
    const auto& [held_grammar, held_compiled] = entry->second;
    const bool is_unused = held_compiled.use_count() == 1;
    entry = is_unused && (held_grammar.use_count() == 1 || is_budget_tight) ? compiled_.erase(entry)
                                                                            : std::next(entry);
  }
  auto it = compiled_.find(grammar.get());
  if (it == compiled_.end()) {
    auto compiled = std::make_shared<const CompiledGrammar>(*grammar, vocabulary(),
                                                            kDefaultMaxGrammarDepth, mask_budget_);
    it = compiled_.emplace(grammar.get(), std::make_pair(grammar, std::move(compiled))).first;
  }
  return std::make_shared<GrammarMatcher>(it->second.second);
}

size_t GrammarConstraints::mask_logits(GrammarMatcher& matcher, std::span<float> logits) {
  const auto begin = std::chrono::steady_clock::now();
  const TokenVocabulary& vocabulary = matcher.compiled().vocabulary();
  mask_.assign(vocabulary.num_mask_words(), 0);
  matcher.fill_next_token_mask(mask_);
  const size_t num_ids = std::min(logits.size(), static_cast<size_t>(vocabulary.vocab_size()));
  size_t num_allowed = 0;
  for (size_t id = 0; id < num_ids; ++id) {
    if (test_token_bit(mask_, static_cast<int32_t>(id))) {
      ++num_allowed;
    } else {
      logits[id] = -std::numeric_limits<float>::infinity();
    }
  }
  for (size_t id = num_ids; id < logits.size(); ++id) {
    logits[id] = -std::numeric_limits<float>::infinity();
  }
  record_mask_time(begin);
  return num_allowed;
}

size_t GrammarConstraints::fill_mask(GrammarMatcher& matcher, std::span<uint32_t> words) {
  const auto begin = std::chrono::steady_clock::now();
  const TokenVocabulary& vocabulary = matcher.compiled().vocabulary();
  const size_t num_words = vocabulary.num_mask_words();
  assert(words.size() >= num_words);  // precondition
  matcher.fill_next_token_mask(words.first(num_words));
  std::fill(words.begin() + static_cast<std::ptrdiff_t>(num_words), words.end(), 0u);
  const size_t vocab_size = static_cast<size_t>(vocabulary.vocab_size());
  if (vocab_size % 32 != 0) words[vocab_size / 32] &= (uint32_t{1} << (vocab_size % 32)) - 1;
  size_t num_allowed = 0;
  for (const uint32_t word : words) num_allowed += static_cast<size_t>(std::popcount(word));
  record_mask_time(begin);
  return num_allowed;
}

void GrammarConstraints::record_mask_time(std::chrono::steady_clock::time_point begin) {
  if (mask_times_us_.size() < kMaxRecordedMaskTimes) {
    mask_times_us_.push_back(
        std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - begin).count());
  }
}

}  // namespace sluice
