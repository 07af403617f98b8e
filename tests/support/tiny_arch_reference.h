// llama.cpp's reference outputs for the tiny-arch models (../shared/models/tiny-arch/README.md):
// the teacher-forced sequence, its logits at every position, and the greedy margins.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::test {

struct TinyArchReference {
  std::vector<int32_t> tokens;  // prompt + greedy ids
  int n_prompt = 0;
  std::vector<float> logits;           // [tokens, vocab], row i after token i
  std::vector<double> greedy_margins;  // top-1 minus top-2 at each greedy step
};

// Reads expected/<TYPE>/ (logits.json, logits.bin, check.json) from `dir`.
TinyArchReference read_tiny_arch_reference(const std::string& dir);

// Max |a - b| over one row of `vocab` logits; infinity where either holds a NaN.
float max_row_difference(const float* a, const float* b, int vocab);

}  // namespace sluice::test
