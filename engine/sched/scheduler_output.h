// The plain data one scheduler step hands to the runner: which requests run, which of their
// tokens, where their K/V (and a hybrid model's state) lives, and the copies to apply first.
// The runner reads it and never changes scheduler or cache state; the engine feeds it back to
// Scheduler::on_step_done.
#pragma once

#include "engine/cache/block_copy.h"
#include "engine/cache/state_copy.h"
#include "engine/core/request_id.h"

#include <cstdint>
#include <vector>

namespace sluice {

struct ScheduledRequest {
  RequestId request_id = 0;
  int num_computed_tokens = 0;     // tokens with K/V before this step
  int num_scheduled_tokens = 0;    // tokens this step computes
  std::vector<int32_t> token_ids;  // [num_scheduled_tokens] at positions num_computed_tokens..
  // [ceil((num_computed_tokens + num_scheduled_tokens) / block_size)] physical block ids
  // covering positions [0, num_computed_tokens + num_scheduled_tokens).
  std::vector<int32_t> block_table;
  bool needs_sample = false;  // this step reaches the last known token: logits, then a sample
  bool is_prefill = false;    // prompt or recomputed history, not a one-token decode
  // Hybrid models: the request's state slot (BatchInputs::state_slots); -1 without state.
  int32_t state_slot = -1;
};

struct SchedulerOutput {
  std::vector<ScheduledRequest> requests;        // running decodes first, then prefills
  int total_num_scheduled_tokens = 0;            // <= max_num_batched_tokens
  std::vector<BlockCopy> block_copies;           // to apply before the forward pass
  std::vector<StateCopy> state_copies;           // hybrid models: also before the forward pass
  std::vector<RequestId> preempted_request_ids;  // blocks taken back, to be recomputed later
  // Rejected or failed (can never fit); each Request is finished with FinishReason::Error and
  // carries the error text.
  std::vector<RequestId> failed_request_ids;
};

}  // namespace sluice
