// LongPromptPolicy::Truncate in one place: a job's run fits every long prompt to the context with
// it, and "run this row alone" fits a stored row's prompt the same way, so both give the engine
// the same tokens (and, under greedy, the same output).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/input/prompt_builder.h"

namespace sluice {

// Keeps the last `keep` tokens of a prompt, the BOS token first when it starts with one.
void keep_prompt_end(std::vector<int32_t>& tokens, size_t keep, int32_t bos_id);

// Fits a built prompt to max_model_len as LongPromptPolicy::Truncate says: one that build()
// refused (certainly too long) is encoded whole by builder first, then one of max_model_len
// tokens or more keeps its end, truncated_prompt_tokens(max_model_len, max_tokens) tokens. A
// prompt that fits passes untouched. Precondition: max_model_len > 0.
void truncate_prompt(BuiltPrompt& prompt, const PromptBuilder& builder, int max_model_len,
                     int max_tokens, int32_t bos_id);

}  // namespace sluice
