// Turns a scheduler step into one forward pass: flattens the scheduled requests into
// BatchInputs (positions, slot mapping, block tables, logits rows, a hybrid model's state
// slots), applies the step's block and state-slot copies, runs the backend and hands back the
// logits of the requests that sample.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/backend/batch_inputs.h"
#include "engine/sched/scheduler_output.h"

namespace sluice {

struct RunnerOutput {
  std::vector<RequestId> sampled_request_ids;  // requests with needs_sample, in batch order
  std::vector<float> logits;                   // [sampled_request_ids.size(), vocab_size]
  // Filled instead of logits when the step sampled on the backend's device: one id per
  // sampled request.
  std::vector<int32_t> sampled_token_ids;
  // With sampled_token_ids: one entry per sampled request, its log-probabilities when its
  // parameters ask for them (Backend::forward_and_sample).
  std::vector<TokenLogprobs> sampled_logprobs;
  bool sampled_on_device = false;
  int vocab_size = 0;

  std::span<float> logits_row(size_t i) {
    return std::span<float>(logits).subspan(i * static_cast<size_t>(vocab_size),
                                            static_cast<size_t>(vocab_size));
  }
};

// Fills `in` with the flat batch for a step (clearing what it held). Precondition: every block
// table covers its request's positions up to num_computed_tokens + num_scheduled_tokens.
void build_batch_inputs(const SchedulerOutput& step, int block_size, BatchInputs& in);

class ModelRunner {
 public:
  ModelRunner(Backend& backend, int block_size, int vocab_size)
      : backend_(backend), block_size_(block_size), vocab_size_(vocab_size) {}

  // Runs the step (block and state copies first, then the forward pass) and fills out with the logits
  // to sample. out's buffers are reused from step to step. With sample_rows (rows_per_request[i]
  // rows for the i-th request that samples, in batch order, each drawn from that request's
  // logits; one each when rows_per_request is empty) the backend samples on its device and out
  // gets one token id per row instead; masks gives the masked rows' token masks.
  // Precondition: sample_rows is empty or the backend samples_on_device(), and sample_rows has
  // as many rows as rows_per_request counts.
  void execute(const SchedulerOutput& step, RunnerOutput& out,
               std::span<const SampleRow> sample_rows = {}, TokenMaskSource* masks = nullptr,
               std::span<const int> rows_per_request = {});

 private:
  Backend& backend_;
  int block_size_;
  int vocab_size_;
  BatchInputs inputs_;  // reused: its vectors keep their capacity
  std::vector<int32_t> copy_src_, copy_dst_;
  std::vector<int32_t> repeated_indices_;
};

}  // namespace sluice
