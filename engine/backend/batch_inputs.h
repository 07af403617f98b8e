// One forward pass's inputs, flattened across requests (vLLM's layout): the tokens of every
// scheduled request back to back, with their positions, the KV slot each token's K/V is
// written to, and each request's block table for reading its context. Every backend checks a
// batch with the one validate_batch_inputs before its forward pass reads it.
#pragma once

#include <cstddef>
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
  std::vector<int32_t> logits_indices;  // token indices whose logits are returned, in order
  // Hybrid models: [num_requests] the state slot of each request. A request whose step starts at
  // position 0 (seq_len == its new tokens) starts from a zero state; otherwise its slot holds
  // the state after its first seq_len - new tokens tokens, and the step updates it in place.
  // Empty for a model without recurrent layers.
  std::vector<int32_t> state_slots;

  int num_tokens() const { return static_cast<int>(token_ids.size()); }
  int num_requests() const { return static_cast<int>(seq_lens.size()); }
  const int32_t* block_table(int request_idx) const {
    return block_tables.data() + static_cast<size_t>(request_idx) * max_blocks_per_request;
  }
};

// What a batch must fit: the model's vocabulary and context, and the backend's KV pool.
struct BatchLimits {
  int vocab_size = 0;
  int max_position_embeddings = 0;
  int num_blocks = 0;  // blocks of the pool the engine may use; 0: no pool allocated yet
  int block_size = 0;
  // ModelConfig::kv_window(): blocks wholly before the window of a request's first query may
  // have been given back (-1 in its table); 0: every block of the context is read.
  int kv_window = 0;
  // Hybrid models: the allocated state slots; every request needs one. 0: the model has none.
  int num_state_slots = 0;
};

// Checks that the fields agree in size (query_start_loc from 0 to num_tokens, never falling;
// block_tables num_requests x max_blocks_per_request), that every token id lies in the
// vocabulary, position in the model's context and slot in the pool, that each request's context
// covers its new tokens within its block table, whose blocks lie in the pool (-1 only where given
// back), that every logits row names a token, and that a hybrid model's requests each name a
// distinct allocated state slot. Throws Error naming the first offender.
void validate_batch_inputs(const BatchInputs& inputs, const BatchLimits& limits);

}  // namespace sluice
