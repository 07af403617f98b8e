// The stories260K reference outputs in ../shared/models/stories260K/expected, parsed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::test {

struct ReferenceLogits {
  int position = 0;
  int input_token = 0;
  std::vector<float> logits;  // [vocab_size]
};

// Every form of stories260K in ../shared: name (for messages), path, tolerance-file suffix.
struct ModelForm {
  std::string name;
  std::string path;         // file or directory, relative to ../shared
  std::string logits_file;  // expected/logits_first3_decode*.json for this form
  bool exact_greedy_256;    // greedy ids must match all 252 generated tokens (F32, F16)
};
std::vector<ModelForm> stories260k_forms();

// expected/prompt.json "prompt_ids".
std::vector<int32_t> reference_prompt_ids();
// expected/greedy_n256.json "generated_ids" (252 ids).
std::vector<int32_t> reference_generated_ids();
// expected/greedy_n256.json "tokens" (prompt + generated, 257 ids).
std::vector<int32_t> reference_tokens();
// Entries of an expected/logits_*.json file.
std::vector<ReferenceLogits> reference_logits(const std::string& file_name);

}  // namespace sluice::test
