// One request's position in a grammar: the set of parse stacks and the partial UTF-8 character
// after the bytes accepted so far. It accepts tokens (byte strings, characters may span tokens)
// and fills the bitmask of tokens allowed next: per stack top the cached mask of its position,
// plus a walk of that position's context-dependent tokens against the real stacks.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/compiled_grammar.h"
#include "engine/grammar/grammar_stack_arena.h"
#include "engine/grammar/utf8_decoder.h"

namespace sluice {

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const CompiledGrammar> compiled);

  // Accepts token id. Stop tokens (EOS) are accepted only when the grammar is complete, and end
  // the match. Returns false (state unchanged, rejection_reason() set) when the grammar does
  // not allow the token.
  bool accept_token(int32_t id);
  // Accepts bytes of text. Returns false (state unchanged, rejection_reason() set) when no
  // parse continues with them.
  bool accept_bytes(std::string_view bytes);

  // Whether the text so far is a complete sentence of the grammar.
  bool is_complete() const;
  // Whether a stop token was accepted.
  bool is_terminated() const { return is_terminated_; }
  // Whether some token can still follow (false for a complete grammar with nothing after it).
  bool can_continue() const;

  // Fills mask ([>= num_mask_words], bit id set = allowed) with the tokens allowed next: stop
  // tokens only when complete. Precondition: mask has vocabulary().num_mask_words() words.
  void fill_next_token_mask(std::span<uint32_t> mask);
  // Same, by stepping every token from the current state (the reference for tests).
  void fill_next_token_mask_by_walk(std::span<uint32_t> mask);

  const std::string& rejection_reason() const { return rejection_reason_; }
  // The parse-stack nodes the matcher holds (its memory, for tests).
  size_t num_arena_nodes() const { return arena_.mark(); }
  const CompiledGrammar& compiled() const { return *compiled_; }

 private:
  void set_stop_bits(std::span<uint32_t> mask) const;

  std::shared_ptr<const CompiledGrammar> compiled_;
  GrammarStackArena arena_;
  std::vector<int32_t> stacks_;  // sorted; kAcceptedStack first when present
  Utf8Decoder utf8_;
  bool is_terminated_ = false;
  std::string rejection_reason_;
  std::vector<int32_t> scratch_a_, scratch_b_, candidates_;
  std::vector<uint32_t> context_;  // positions of a stack's top frames
  // The arena is compacted to the live stacks' nodes when it holds four times what it kept the
  // last time (and at least this many): a matcher's memory follows its stacks, not its output.
  static constexpr size_t kMinNodesToCompact = size_t{1} << 14;
  size_t num_nodes_after_compact_ = 0;
};

// Returns whether text as a whole is a sentence of grammar (its bytes matched directly, no
// tokenizer involved): how a finished output is checked.
bool grammar_accepts_text(const Grammar& grammar, std::string_view text);

}  // namespace sluice
