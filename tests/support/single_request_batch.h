// Hand-made BatchInputs for backend tests: one request whose positions lie contiguously in
// blocks 0, 1, 2, ... (block b holds positions [b * block_size, (b + 1) * block_size)).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/backend/batch_inputs.h"

namespace sluice::test {

// tokens at positions [start_position, start_position + tokens.size()); logits for every token
// (all_logits) or the last one.
inline BatchInputs single_request_batch(const std::vector<int32_t>& tokens, int start_position, int num_blocks,
                                        bool all_logits) {
  BatchInputs in;
  const int n = static_cast<int>(tokens.size());
  for (int i = 0; i < n; ++i) {
    in.token_ids.push_back(tokens[static_cast<size_t>(i)]);
    in.positions.push_back(start_position + i);
    in.slot_mapping.push_back(start_position + i);
    if (all_logits || i == n - 1) in.logits_indices.push_back(i);
  }
  in.query_start_loc = {0, n};
  in.seq_lens = {start_position + n};
  in.max_blocks_per_request = num_blocks;
  for (int b = 0; b < num_blocks; ++b) in.block_tables.push_back(b);
  return in;
}

// The index of the largest logit (the first on ties).
inline int32_t argmax(const float* logits, int n) {
  return static_cast<int32_t>(std::max_element(logits, logits + n) - logits);
}

}  // namespace sluice::test
