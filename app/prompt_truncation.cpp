#include "app/prompt_truncation.h"

#include <cassert>
#include <cstddef>
#include <utility>

#include "app/generation_spec.h"

namespace sluice {

void keep_prompt_end(std::vector<int32_t>& tokens, size_t keep, int32_t bos_id) {
  if (tokens.size() <= keep) return;
  std::vector<int32_t> kept;
  kept.reserve(keep);
  if (keep >= 2 && tokens.front() == bos_id) kept.push_back(bos_id);
  const size_t num_tail = keep - kept.size();
  kept.insert(kept.end(), tokens.end() - static_cast<std::ptrdiff_t>(num_tail), tokens.end());
  tokens = std::move(kept);
}

void truncate_prompt(BuiltPrompt& prompt, const PromptBuilder& builder, int max_model_len,
                     int max_tokens, int32_t bos_id) {
  assert(max_model_len > 0);  // a remote server checks the length itself
  if (!prompt.refusal.empty()) {
    // The refusal spared tokenizing the text; truncating needs its tokens.
    prompt.token_ids = builder.encode_whole(prompt.text);
    prompt.refusal.clear();
  }
  if (prompt.token_ids.size() < static_cast<size_t>(max_model_len)) return;
  keep_prompt_end(prompt.token_ids,
                  static_cast<size_t>(truncated_prompt_tokens(max_model_len, max_tokens)), bos_id);
}

}  // namespace sluice
