#include "engine/runner/model_runner.h"

#include <algorithm>
#include <cassert>

namespace sluice {

void build_batch_inputs(const SchedulerOutput& step, int block_size, BatchInputs& in) {
  in.token_ids.clear();
  in.positions.clear();
  in.slot_mapping.clear();
  in.query_start_loc.clear();
  in.seq_lens.clear();
  in.logits_indices.clear();
  in.state_slots.clear();
  in.max_blocks_per_request = 0;
  in.token_ids.reserve(static_cast<size_t>(step.total_num_scheduled_tokens));
  in.positions.reserve(static_cast<size_t>(step.total_num_scheduled_tokens));
  in.slot_mapping.reserve(static_cast<size_t>(step.total_num_scheduled_tokens));
  in.query_start_loc.push_back(0);
  for (const auto& r : step.requests) {
    in.max_blocks_per_request =
        std::max(in.max_blocks_per_request, static_cast<int>(r.block_table.size()));
  }
  in.block_tables.assign(step.requests.size() * static_cast<size_t>(in.max_blocks_per_request), -1);
  for (size_t i = 0; i < step.requests.size(); ++i) {
    const ScheduledRequest& r = step.requests[i];
    assert(static_cast<int>(r.token_ids.size()) ==
           r.num_scheduled_tokens);  // the scheduler's contract
    for (int j = 0; j < r.num_scheduled_tokens; ++j) {
      const int position = r.num_computed_tokens + j;
      in.token_ids.push_back(r.token_ids[static_cast<size_t>(j)]);
      in.positions.push_back(position);
      const int32_t block_id = r.block_table[static_cast<size_t>(position / block_size)];
      in.slot_mapping.push_back(static_cast<int64_t>(block_id) * block_size +
                                position % block_size);
    }
    in.query_start_loc.push_back(static_cast<int32_t>(in.token_ids.size()));
    in.seq_lens.push_back(r.num_computed_tokens + r.num_scheduled_tokens);
    std::copy(r.block_table.begin(), r.block_table.end(),
              in.block_tables.begin() + static_cast<long>(i) * in.max_blocks_per_request);
    if (r.needs_sample) in.logits_indices.push_back(in.query_start_loc.back() - 1);
    // A hybrid model's requests each name their state slot; other models' none.
    assert((r.state_slot >= 0) == (step.requests.front().state_slot >= 0));
    if (r.state_slot >= 0) in.state_slots.push_back(r.state_slot);
  }
}

void ModelRunner::execute(const SchedulerOutput& step, RunnerOutput& out,
                          std::span<const SampleRow> sample_rows, TokenMaskSource* masks,
                          std::span<const int> rows_per_request) {
  if (!step.block_copies.empty()) {
    copy_src_.clear();
    copy_dst_.clear();
    for (const auto& copy : step.block_copies) {
      copy_src_.push_back(copy.src_block_id);
      copy_dst_.push_back(copy.dst_block_id);
    }
    backend_.copy_blocks(copy_src_, copy_dst_);
  }
  if (!step.state_copies.empty()) {
    copy_src_.clear();
    copy_dst_.clear();
    for (const auto& copy : step.state_copies) {
      copy_src_.push_back(copy.src_slot);
      copy_dst_.push_back(copy.dst_slot);
    }
    backend_.copy_state_slots(copy_src_, copy_dst_);
  }
  out.vocab_size = vocab_size_;
  out.sampled_request_ids.clear();
  out.logits.clear();
  out.sampled_token_ids.clear();
  out.sampled_logprobs.clear();
  out.sampled_on_device = false;
  for (const auto& r : step.requests) {
    if (r.needs_sample) out.sampled_request_ids.push_back(r.request_id);
  }
  if (step.requests.empty()) return;
  build_batch_inputs(step, block_size_, inputs_);
  if (sample_rows.empty() || out.sampled_request_ids.empty()) {
    backend_.forward(inputs_, out.logits);
    return;
  }
  if (!rows_per_request.empty()) {
    // A request drawing several samples from one logits row (a prompt forking into n) repeats
    // its row's index.
    assert(rows_per_request.size() == inputs_.logits_indices.size());
    std::vector<int32_t>& indices = inputs_.logits_indices;
    repeated_indices_.clear();
    for (size_t i = 0; i < indices.size(); ++i)
      repeated_indices_.insert(repeated_indices_.end(), static_cast<size_t>(rows_per_request[i]),
                               indices[i]);
    indices.swap(repeated_indices_);
  }
  backend_.forward_and_sample(inputs_, sample_rows, masks, out.sampled_token_ids,
                              out.sampled_logprobs);
  out.sampled_on_device = true;
}

}  // namespace sluice
