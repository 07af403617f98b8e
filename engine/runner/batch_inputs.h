// One forward pass's inputs, flattened across requests (vLLM's layout): the tokens of every
// scheduled request back to back, with their positions, the KV slot each token's K/V is
// written to, and each request's block table for reading its context.
#pragma once

#include <cstdint>
#include <vector>

namespace sluice {

struct BatchInputs {
  std::vector<int32_t> token_ids;        // [num_tokens]
  std::vector<int32_t> positions;        // [num_tokens] position of each token in its request
  std::vector<int64_t> slot_mapping;     // [num_tokens] block_id * block_size + offset in block
  std::vector<int32_t> query_start_loc;  // [num_requests + 1] request r owns tokens [q[r], q[r+1])
  std::vector<int32_t> seq_lens;         // [num_requests] context length after this step
  std::vector<int32_t> block_tables;     // [num_requests, max_blocks_per_request], -1 padded
  int max_blocks_per_request = 0;
  std::vector<int32_t> logits_indices;   // token indices whose logits are returned, in order

  int num_tokens() const { return static_cast<int>(token_ids.size()); }
  int num_requests() const { return static_cast<int>(seq_lens.size()); }
  const int32_t* block_table(int request_idx) const {
    return block_tables.data() + static_cast<size_t>(request_idx) * max_blocks_per_request;
  }
};

}  // namespace sluice
