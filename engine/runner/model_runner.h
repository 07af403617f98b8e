// Turns a scheduler step into one forward pass: flattens the scheduled requests into
// BatchInputs (positions, slot mapping, block tables, logits rows), applies the step's block
// copies, runs the backend and hands back the logits of the requests that sample.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/runner/batch_inputs.h"
#include "engine/sched/scheduler_output.h"

namespace sluice {

struct RunnerOutput {
  std::vector<RequestId> sampled_request_ids;  // requests with needs_sample, in batch order
  std::vector<float> logits;                   // [sampled_request_ids.size(), vocab_size]
  int vocab_size = 0;

  std::span<float> logits_row(size_t i) {
    return std::span<float>(logits).subspan(i * static_cast<size_t>(vocab_size), static_cast<size_t>(vocab_size));
  }
};

// Returns the flat batch for a step. Precondition: every block table covers its request's
// positions up to num_computed_tokens + num_scheduled_tokens.
BatchInputs build_batch_inputs(const SchedulerOutput& step, int block_size);

class ModelRunner {
 public:
  ModelRunner(Backend& backend, int block_size, int vocab_size)
      : backend_(backend), block_size_(block_size), vocab_size_(vocab_size) {}

  // Runs the step (block copies first, then the forward pass). Returns the logits to sample.
  RunnerOutput execute(const SchedulerOutput& step);

 private:
  Backend& backend_;
  int block_size_;
  int vocab_size_;
};

}  // namespace sluice
