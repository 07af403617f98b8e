// Decides many tokens at once from one parse state by walking them in byte order (the flat trie
// of TokenVocabulary): the states after each prefix are kept by depth and reused by the next
// token that shares the prefix, and the tokens under a prefix no stack survives are decided
// without stepping.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "engine/grammar/grammar_stack_arena.h"
#include "engine/grammar/token_vocabulary.h"
#include "engine/grammar/utf8_decoder.h"

namespace sluice {

enum class TokenVerdict : uint8_t {
  Rejected,   // no parse consumes the token's bytes
  Accepted,   // some parse consumes them
  Dependent,  // only parses that leave the rule under the Sentinel could: the enclosing rules
              // decide
};

// Calls on_token(id, verdict) for each id of sorted_ids (which must be in the vocabulary's byte
// order) stepping from stacks and utf8. Nodes it makes stay in arena (roll back after).
void walk_tokens(GrammarStackArena& arena, std::span<const int32_t> stacks, const Utf8Decoder& utf8,
                 const TokenVocabulary& vocabulary, std::span<const int32_t> sorted_ids,
                 const std::function<void(int32_t, TokenVerdict)>& on_token);

}  // namespace sluice
