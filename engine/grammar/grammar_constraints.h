// What the engine needs to constrain requests with grammars: the tokenizer's vocabulary as the
// matcher sees it (built on first use), one CompiledGrammar per grammar (so every request with
// the same grammar shares its cached masks), and the step that turns a matcher's bitmask into
// -inf logits before sampling on the host, or into the bitmask a device sampler applies.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "engine/grammar/compiled_grammar.h"
#include "engine/grammar/grammar_matcher.h"

namespace sluice {

class Tokenizer;

class GrammarConstraints {
 public:
  // tokenizer must outlive this object.
  explicit GrammarConstraints(const Tokenizer& tokenizer) : tokenizer_(&tokenizer) {}

  // Returns a fresh matcher at the start of grammar, compiling grammar against the tokenizer
  // the first time it is seen. Grammars that only this object still holds (no request, no
  // matcher) are forgotten first, and so are those no matcher uses once their masks take half
  // the mask budget. Throws sluice::Error when the grammar's root cannot start (past the
  // matcher's bounds).
  std::shared_ptr<GrammarMatcher> make_matcher(const std::shared_ptr<const Grammar>& grammar);

  // Sets logits[id] to -inf for every id the matcher does not allow next (ids past the
  // tokenizer's vocabulary included). Returns the number of ids still allowed. logits:
  // [vocab_size of the model].
  size_t mask_logits(GrammarMatcher& matcher, std::span<float> logits);

  // Writes the matcher's next-token mask into words (bit id % 32 of word id / 32 set when id may
  // come next; no bit at or past the tokenizer's vocabulary) for sampling on a device. Returns
  // the number of ids allowed. Precondition: words covers the tokenizer's vocabulary (the
  // model's vocabulary is never smaller).
  size_t fill_mask(GrammarMatcher& matcher, std::span<uint32_t> words);

  // Returns the vocabulary the matchers use (built on first use).
  const std::shared_ptr<const TokenVocabulary>& vocabulary();

  // The time of the first kMaxRecordedMaskTimes mask_logits calls, in microseconds (for
  // benchmarks). Bounded: a long constrained job or a server would otherwise keep four bytes
  // for every token it ever sampled.
  const std::vector<float>& mask_times_us() const { return mask_times_us_; }
  static constexpr size_t kMaxRecordedMaskTimes = size_t{1} << 16;

  // Grammars compiled and still held.
  size_t num_compiled() const { return compiled_.size(); }
  // The budget every compiled grammar's cached masks share.
  const MaskCacheBudget& mask_budget() const { return *mask_budget_; }

 private:
  const Tokenizer* tokenizer_;
  std::shared_ptr<const TokenVocabulary> vocabulary_;
  // Keyed by the grammar's address; the entry keeps the grammar alive so the key stays unique.
  std::map<const Grammar*,
           std::pair<std::shared_ptr<const Grammar>, std::shared_ptr<const CompiledGrammar>>>
      compiled_;
  std::shared_ptr<MaskCacheBudget> mask_budget_ = std::make_shared<MaskCacheBudget>();
  std::vector<uint32_t> mask_;  // [num_mask_words] scratch
  void record_mask_time(std::chrono::steady_clock::time_point begin);

  std::vector<float> mask_times_us_;
};

}  // namespace sluice
