// What the engine reports after every step: throughput, batch occupancy, queue lengths, KV
// block usage and a hybrid model's state slots. Plain values, cheap to copy across threads.
#pragma once

#include <cstdint>

#include "engine/backend/backend.h"

namespace sluice {

struct StepStats {
  int64_t step_index = 0;
  double step_time_ms = 0.0;
  double elapsed_s = 0.0;             // since the engine started stepping
  int num_scheduled_requests = 0;     // requests in this step's batch
  int num_scheduled_tokens = 0;       // tokens in this step's forward pass
  int num_prompt_tokens = 0;          // of which prefill (prompt or recomputation)
  int num_generation_tokens = 0;      // tokens sampled this step
  double prompt_tokens_per_s = 0.0;      // over the last second of steps
  double generation_tokens_per_s = 0.0;  // over the last second of steps
  int num_running = 0;
  int num_waiting = 0;
  int max_num_seqs = 0;
  int64_t num_preemptions = 0;        // since the engine started
  int64_t num_finished = 0;           // since the engine started
  int64_t total_prompt_tokens = 0;    // computed since the engine started
  int64_t total_generation_tokens = 0;
  int num_kv_blocks = 0;
  int num_kv_blocks_used = 0;         // held by requests
  int num_kv_blocks_cached = 0;       // free but revivable by a prefix hit
  int num_kv_blocks_free = 0;         // free (cached ones included)
  int peak_kv_blocks_used = 0;
  int64_t num_kv_tokens = 0;          // token slots held by live requests (shared ones per holder)
  double prefix_cache_hit_rate = 0.0; // tokens found in the cache / tokens looked up
  // Hybrid models (0 otherwise): the state slots beside the blocks, those held by running
  // requests and those holding prefix checkpoints, the bytes of one, and the requests that
  // started from a checkpoint since the engine started.
  int num_state_slots = 0;
  int num_state_slots_used = 0;
  int num_state_checkpoints = 0;
  size_t state_slot_bytes = 0;
  int64_t num_state_checkpoint_hits = 0;
  BackendMemory memory;

  double batch_occupancy() const {
    return max_num_seqs > 0 ? static_cast<double>(num_scheduled_requests) / max_num_seqs : 0.0;
  }
};

}  // namespace sluice
