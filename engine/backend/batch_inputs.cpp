#include "engine/backend/batch_inputs.h"

#include <vector>

#include "engine/core/error.h"

namespace sluice {

namespace {

void check_sizes(const BatchInputs& in) {
  const int num_tokens = in.num_tokens();
  const int num_requests = in.num_requests();
  if (in.positions.size() != in.token_ids.size() || in.slot_mapping.size() != in.token_ids.size() ||
      static_cast<int>(in.query_start_loc.size()) != num_requests + 1 ||
      in.max_blocks_per_request < 0 ||
      in.block_tables.size() !=
          static_cast<size_t>(num_requests) * static_cast<size_t>(in.max_blocks_per_request) ||
      in.query_start_loc.front() != 0 || in.query_start_loc.back() != num_tokens) {
    fail("malformed batch: ", num_tokens, " tokens, ", num_requests, " requests");
  }
}

void check_tokens(const BatchInputs& in, const BatchLimits& limits) {
  const int64_t num_slots = static_cast<int64_t>(limits.num_blocks) * limits.block_size;
  for (size_t i = 0; i < in.token_ids.size(); ++i) {
    if (in.token_ids[i] < 0 || in.token_ids[i] >= limits.vocab_size)
      fail("token id ", in.token_ids[i], " is outside the vocabulary (", limits.vocab_size, ")");
    if (in.slot_mapping[i] < 0 || in.slot_mapping[i] >= num_slots)
      fail("KV slot ", in.slot_mapping[i], " is outside the pool (", num_slots, " slots)");
    if (in.positions[i] < 0 || in.positions[i] >= limits.max_position_embeddings) {
      fail("position ", in.positions[i], " is past the model's context (",
           limits.max_position_embeddings, ")");
    }
  }
}

void check_request(const BatchInputs& in, const BatchLimits& limits, int r) {
  const auto i = static_cast<size_t>(r);
  const int query_len = in.query_start_loc[i + 1] - in.query_start_loc[i];
  const int seq_len = in.seq_lens[i];
  const int num_used = (seq_len + limits.block_size - 1) / limits.block_size;
  if (query_len < 0 || seq_len < query_len || num_used > in.max_blocks_per_request)
    fail("request ", r, " of the batch: context ", seq_len, " for ", query_len, " new tokens");
  const int32_t* table = in.block_table(r);
  // Blocks wholly before the window of the request's first query may have been given back
  // (-1): no backend reads them. The entries past the context are padding.
  const int first_seen = limits.kv_window > 0 ? seq_len - query_len - limits.kv_window + 1 : 0;
  for (int b = 0; b < in.max_blocks_per_request; ++b) {
    const bool is_used = b < num_used;
    const bool given_back = table[b] == -1 && (b + 1) * limits.block_size <= first_seen;
    if (table[b] >= limits.num_blocks || (is_used && !given_back && table[b] < 0))
      fail("block id ", table[b], " is outside the pool (", limits.num_blocks, " blocks)");
  }
}

void check_state_slots(const BatchInputs& in, const BatchLimits& limits) {
  if (limits.num_state_slots == 0) {
    if (!in.state_slots.empty()) fail("malformed batch: state slots for a model without state");
    return;
  }
  if (static_cast<int>(in.state_slots.size()) != in.num_requests())
    fail("malformed batch: ", in.state_slots.size(), " state slots for ", in.num_requests(),
         " requests");
  std::vector<bool> seen(static_cast<size_t>(limits.num_state_slots), false);
  for (int r = 0; r < in.num_requests(); ++r) {
    const int32_t slot = in.state_slots[static_cast<size_t>(r)];
    if (slot < 0 || slot >= limits.num_state_slots)
      fail("request ", r, " of the batch: state slot ", slot, " is outside the ",
           limits.num_state_slots, " slots");
    if (seen[static_cast<size_t>(slot)])
      fail("request ", r, " of the batch: state slot ", slot, " is another request's");
    seen[static_cast<size_t>(slot)] = true;
  }
}

}  // namespace

void validate_batch_inputs(const BatchInputs& in, const BatchLimits& limits) {
  if (limits.num_blocks == 0) fail("forward pass before the KV cache was allocated");
  check_sizes(in);
  check_tokens(in, limits);
  for (int r = 0; r < in.num_requests(); ++r) check_request(in, limits, r);
  check_state_slots(in, limits);
  for (const int32_t row : in.logits_indices) {
    if (row < 0 || row >= in.num_tokens())
      fail("logits row ", row, " of ", in.num_tokens(), " tokens");
  }
}

}  // namespace sluice
