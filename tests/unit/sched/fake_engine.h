// A stand-in for Engine::step() over a fake model, for scheduler tests without a backend.
//
// The fake model's next token is a hash of the whole token history and the sample index, so a
// single wrong token anywhere in the context changes every token after it. The "KV cache" is a
// memory of one token per slot: a step writes each scheduled token to the slot its block
// table names, and sampling reads the history back through the block table. Outputs therefore
// match the reference (the model run alone, without scheduler or cache) only if block tables,
// copy-on-write, prefix hits and recomputation after preemption are all right.
//
// With a state pool (a hybrid model) the fake model reads the history from the request's state
// slot instead: a slot's "state" is the list of tokens it has consumed, started empty at
// position 0, extended by each step, copied by the step's state copies. A wrong slot, a lost
// fork copy or a wrong checkpoint gives another history and other tokens.
//
// With a sliding window w the fake model sees, like attention, only the last w tokens (and how
// many there are), and sampling reads only those back; every block it reads must still be held
// by the request, so a block given back too early fails even before another request reuses it.
#pragma once

#include "engine/cache/kv_cache_manager.h"
#include "engine/cache/state_pool.h"
#include "engine/sched/request.h"
#include "engine/sched/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <vector>

namespace sluice::test {

inline constexpr int32_t kFakeEosTokenId = 0;
inline constexpr RequestId kChildIdStride = 1'000'000;

// The fake model: the next token after history for sample sample_idx; with a window, from the
// last `window` tokens of history and its length.
inline int32_t fake_next_token(std::span<const int32_t> history, uint32_t sample_idx,
                               int vocab_size, int window = 0) {
  uint64_t h = 0xcbf29ce484222325ULL ^ (0x9e3779b97f4a7c15ULL * (sample_idx + 1));
  if (window > 0 && history.size() > static_cast<size_t>(window)) {
    h ^= history.size();
    h *= 0x100000001b3ULL;
    history = history.last(static_cast<size_t>(window));
  }
  for (const int32_t token_id : history) {
    h ^= static_cast<uint32_t>(token_id);
    h *= 0x100000001b3ULL;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return static_cast<int32_t>(h % static_cast<uint64_t>(vocab_size));
}

struct ReferenceRun {
  std::vector<int32_t> output_token_ids;
  FinishReason finish_reason = FinishReason::None;
};

// Runs the fake model over prompt alone: the outputs an undisturbed request must produce.
inline ReferenceRun reference_run(std::span<const int32_t> prompt, uint32_t sample_idx,
                                  const SamplingParams& params, int max_model_len, int vocab_size,
                                  int window = 0) {
  ReferenceRun run;
  std::vector<int32_t> tokens(prompt.begin(), prompt.end());
  while (true) {
    const int32_t token_id = fake_next_token(tokens, sample_idx, vocab_size, window);
    if (token_id == kFakeEosTokenId && !params.ignore_eos) {
      run.finish_reason = FinishReason::Stop;
      return run;
    }
    tokens.push_back(token_id);
    run.output_token_ids.push_back(token_id);
    if (static_cast<int>(run.output_token_ids.size()) >= params.max_tokens ||
        static_cast<int>(tokens.size()) >= max_model_len) {
      run.finish_reason = FinishReason::Length;
      return run;
    }
  }
}

class FakeEngine {
 public:
  // model_window: the fake model's sliding window (0: none); by default the one the cache frees
  // blocks for. A cache window of 0 with a model window runs the model without freeing.
  FakeEngine(const SchedulerConfig& scheduler_config, const KvCacheConfig& kv_cache_config,
             int vocab_size = 1000, int model_window = -1,
             const StatePoolConfig& state_pool_config = {})
      : kv_(kv_cache_config),
        state_pool_(state_pool_config.num_slots > 0 ? std::make_unique<StatePool>(state_pool_config)
                                                    : nullptr),
        scheduler_(scheduler_config, kv_, state_pool_.get()),
        states_(static_cast<size_t>(state_pool_config.num_slots)),
        memory_(static_cast<size_t>(kv_cache_config.num_blocks) * kv_cache_config.block_size, -1),
        vocab_size_(vocab_size),
        model_window_(model_window >= 0 ? model_window : kv_cache_config.sliding_window) {}

  Scheduler& scheduler() { return scheduler_; }
  const KvCacheManager& kv() const { return kv_; }
  const StatePool* state_pool() const { return state_pool_.get(); }
  // The most state slots held by requests at once, measured after each schedule().
  int max_used_state_slots() const { return max_used_state_slots_; }
  int num_state_copies() const { return num_state_copies_; }
  static RequestId child_id(RequestId parent_id, uint32_t sample_idx) {
    return parent_id + kChildIdStride * sample_idx;
  }

  // Adds a prompt (sample 0; children for n > 1 come at its first sample). Returns whether
  // the scheduler accepted it.
  bool add(RequestId request_id, std::vector<int32_t> prompt, const SamplingParams& params) {
    request_ids_.push_back(request_id);
    return scheduler_.add_request(make_request(request_id, std::move(prompt), params, request_id));
  }

  // One engine step with every scheduler contract checked. Returns the step's plan.
  SchedulerOutput step() {
    const bool had_unfinished = scheduler_.has_unfinished();
    SchedulerOutput output = scheduler_.schedule();
    max_used_blocks_ = std::max(max_used_blocks_, kv_.num_used_blocks());
    if (state_pool_)
      max_used_state_slots_ = std::max(max_used_state_slots_, state_pool_->num_request_slots());
    check_plan(output, had_unfinished);
    run_forward(output);
    scheduler_.on_step_done(output);
    scheduler_.check_invariants();
    for (const ScheduledRequest& scheduled : output.requests) {
      if (scheduled.needs_sample) sample(scheduled);
    }
    scheduler_.check_invariants();
    ++num_steps_;
    return output;
  }

  // Steps until nothing is unfinished; fails the test past max_steps.
  void run(int max_steps = 100000) {
    while (scheduler_.has_unfinished() && !testing::Test::HasFailure()) {
      if (num_steps_ >= max_steps) {
        ADD_FAILURE() << "still unfinished after " << max_steps << " steps";
        return;
      }
      step();
    }
  }

  // Every request (children included) that ended by Stop or Length produced exactly the
  // reference outputs; aborted and failed ones produced a prefix of them.
  void expect_outputs_match_reference() const {
    for (const RequestId request_id : all_request_ids()) {
      const Request& request = scheduler_.request(request_id);
      ASSERT_TRUE(request.is_finished()) << "request " << request_id;
      const ReferenceRun reference = reference_of(request);
      const std::vector<int32_t> outputs(request.output_token_ids().begin(),
                                         request.output_token_ids().end());
      if (request.finish_reason == FinishReason::Stop ||
          request.finish_reason == FinishReason::Length) {
        EXPECT_EQ(outputs, reference.output_token_ids) << "request " << request_id;
        EXPECT_EQ(request.finish_reason, reference.finish_reason) << "request " << request_id;
      } else {
        ASSERT_LE(outputs.size(), reference.output_token_ids.size()) << "request " << request_id;
        EXPECT_TRUE(std::equal(outputs.begin(), outputs.end(), reference.output_token_ids.begin()))
            << "request " << request_id;
      }
    }
  }

  // Returns the reference run of request (its prompt, sample index and parameters).
  ReferenceRun reference_of(const Request& request) const {
    return reference_run(request.prompt_token_ids(), request.sample_idx, request.sampling_params,
                         scheduler_.config().max_model_len, vocab_size_, model_window_);
  }

  // Returns the ids added and the children forked so far.
  std::vector<RequestId> all_request_ids() const {
    std::vector<RequestId> ids = request_ids_;
    ids.insert(ids.end(), child_ids_.begin(), child_ids_.end());
    return ids;
  }

  int num_steps() const { return num_steps_; }
  int max_requests_in_step() const { return max_requests_in_step_; }
  int max_tokens_in_step() const { return max_tokens_in_step_; }
  int num_block_copies() const { return num_block_copies_; }
  // The most blocks held at once, measured after each schedule() (before the step's blocks
  // outside the window are given back).
  int max_used_blocks() const { return max_used_blocks_; }

 private:
  void check_plan(const SchedulerOutput& output, bool had_unfinished) {
    const SchedulerConfig& config = scheduler_.config();
    // The engine never stalls: a step with work to do schedules or fails something.
    if (had_unfinished) {
      EXPECT_TRUE(!output.requests.empty() || !output.failed_request_ids.empty() ||
                  !output.state_copies.empty())
          << "step " << num_steps_ << " made no progress";
    }
    EXPECT_LE(static_cast<int>(output.requests.size()), config.max_num_seqs);
    EXPECT_LE(output.total_num_scheduled_tokens, config.max_num_batched_tokens);
    int total = 0;
    bool seen_prefill = false;
    std::set<RequestId> ids;
    std::set<int32_t> slots;
    for (const ScheduledRequest& scheduled : output.requests) {
      const Request& request = scheduler_.request(scheduled.request_id);
      EXPECT_TRUE(ids.insert(scheduled.request_id).second) << "scheduled twice";
      EXPECT_EQ(request.state, RequestState::Running);
      EXPECT_GE(scheduled.num_scheduled_tokens, 1);
      EXPECT_EQ(scheduled.num_computed_tokens, request.num_computed_tokens);
      const int end = scheduled.num_computed_tokens + scheduled.num_scheduled_tokens;
      ASSERT_LE(end, request.num_tokens());
      EXPECT_EQ(scheduled.token_ids,
                std::vector<int32_t>(request.token_ids.begin() + scheduled.num_computed_tokens,
                                     request.token_ids.begin() + end));
      EXPECT_EQ(static_cast<int>(scheduled.block_table.size()), kv_.num_blocks_for_tokens(end));
      EXPECT_EQ(scheduled.needs_sample, end == request.num_tokens());
      // Without chunked prefill a prompt runs whole; only a preempted request resumes in pieces.
      if (!config.enable_chunked_prefill && request.num_preemptions == 0) {
        EXPECT_TRUE(scheduled.needs_sample) << "request " << request.request_id << " was chunked";
      }
      EXPECT_FALSE(seen_prefill && !scheduled.is_prefill) << "a decode after a prefill";
      if (state_pool_) {
        EXPECT_EQ(scheduled.state_slot, state_pool_->slot_of(scheduled.request_id));
        EXPECT_GE(scheduled.state_slot, 0);
        EXPECT_TRUE(slots.insert(scheduled.state_slot).second) << "a state slot twice";
      } else {
        EXPECT_EQ(scheduled.state_slot, -1);
      }
      seen_prefill = seen_prefill || scheduled.is_prefill;
      total += scheduled.num_scheduled_tokens;
    }
    EXPECT_EQ(total, output.total_num_scheduled_tokens);
    if (!state_pool_) {
      EXPECT_TRUE(output.state_copies.empty());
    }
    // The step's state copies are independent: no slot both read and written, none written twice.
    std::set<int32_t> sources, destinations;
    for (const StateCopy& copy : output.state_copies) sources.insert(copy.src_slot);
    for (const StateCopy& copy : output.state_copies) {
      EXPECT_FALSE(sources.contains(copy.dst_slot))
          << "slot " << copy.dst_slot << " read and written";
      EXPECT_TRUE(destinations.insert(copy.dst_slot).second)
          << "slot " << copy.dst_slot << " written twice";
    }
    for (const RequestId request_id : output.failed_request_ids) {
      const Request& request = scheduler_.request(request_id);
      EXPECT_EQ(request.finish_reason, FinishReason::Error);
      EXPECT_FALSE(request.error.empty());
    }
    max_requests_in_step_ =
        std::max(max_requests_in_step_, static_cast<int>(output.requests.size()));
    max_tokens_in_step_ = std::max(max_tokens_in_step_, output.total_num_scheduled_tokens);
  }

  // Applies the block copies, then writes every scheduled token's K/V (here: the token) to
  // the slot its block table names, as the backend would.
  void run_forward(const SchedulerOutput& output) {
    const size_t block_size = static_cast<size_t>(kv_.block_size());
    for (const BlockCopy& copy : output.block_copies) {
      std::copy_n(memory_.begin() + copy.src_block_id * block_size, block_size,
                  memory_.begin() + copy.dst_block_id * block_size);
      ++num_block_copies_;
    }
    run_state(output);
    std::set<size_t> written;
    for (const ScheduledRequest& scheduled : output.requests) {
      for (int i = 0; i < scheduled.num_scheduled_tokens; ++i) {
        const size_t slot = slot_of(scheduled.block_table, scheduled.num_computed_tokens + i);
        EXPECT_TRUE(written.insert(slot).second) << "two tokens written to slot " << slot;
        memory_[slot] = scheduled.token_ids[i];
      }
    }
    for (const ScheduledRequest& scheduled : output.requests) read_windows(scheduled);
  }

  // The state half of the forward pass: copies first, then each request's slot starts empty at
  // position 0 or must hold exactly its tokens so far, and takes the step's tokens.
  void run_state(const SchedulerOutput& output) {
    if (!state_pool_) return;
    const std::vector<std::vector<int32_t>> before = states_;
    for (const StateCopy& copy : output.state_copies) {
      states_[static_cast<size_t>(copy.dst_slot)] = before[static_cast<size_t>(copy.src_slot)];
      ++num_state_copies_;
    }
    for (const ScheduledRequest& scheduled : output.requests) {
      const Request& request = scheduler_.request(scheduled.request_id);
      std::vector<int32_t>& state = states_[static_cast<size_t>(scheduled.state_slot)];
      if (scheduled.num_computed_tokens == 0) state.clear();
      EXPECT_EQ(state,
                std::vector<int32_t>(request.token_ids.begin(),
                                     request.token_ids.begin() + scheduled.num_computed_tokens))
          << "request " << request.request_id << " resumes from another state";
      state.insert(state.end(), scheduled.token_ids.begin(), scheduled.token_ids.end());
    }
  }

  size_t slot_of(const std::vector<int32_t>& block_table, int position) const {
    const int block_size = kv_.block_size();
    return static_cast<size_t>(block_table[position / block_size]) * block_size +
           position % block_size;
  }

  // The first position a query at `position` sees under the model's window.
  int first_visible(int position) const {
    return model_window_ > 0 ? std::max(0, position - model_window_ + 1) : 0;
  }

  // What the forward pass reads: every block the step's queries see must be in the table and
  // held; for a request that samples, the history its last query sees is read back (positions
  // before its window are the request's own tokens: the model ignores them).
  void read_windows(const ScheduledRequest& scheduled) {
    const Request& request = scheduler_.request(scheduled.request_id);
    const int num_tokens = scheduled.num_computed_tokens + scheduled.num_scheduled_tokens;
    const int block_size = kv_.block_size();
    for (int b = first_visible(scheduled.num_computed_tokens) / block_size;
         b * block_size < num_tokens; ++b) {
      const int32_t block_id = scheduled.block_table[static_cast<size_t>(b)];
      ASSERT_NE(block_id, kNoBlock)
          << "request " << request.request_id << " gave back block " << b << " it still sees";
      ASSERT_GT(kv_.block_pool().block(block_id).ref_count, 0)
          << "request " << request.request_id << " reads free block " << block_id;
    }
    if (!scheduled.needs_sample) return;
    const int first = first_visible(num_tokens - 1);
    std::vector<int32_t> history(request.token_ids.begin(), request.token_ids.begin() + first);
    for (int position = first; position < num_tokens; ++position) {
      history.push_back(memory_[slot_of(scheduled.block_table, position)]);
    }
    ASSERT_EQ(history, request.token_ids)
        << "the cache of request " << request.request_id << " holds other tokens";
    // A hybrid model's next token comes from its state.
    if (state_pool_) history = states_[static_cast<size_t>(scheduled.state_slot)];
    histories_[request.request_id] = std::move(history);
  }

  void sample(const ScheduledRequest& scheduled) {
    const Request& request = scheduler_.request(scheduled.request_id);
    const std::vector<int32_t> history = std::move(histories_.at(request.request_id));
    histories_.erase(request.request_id);
    // n > 1: the parent's first sample gives each child its own first token.
    if (request.sampling_params.n > 1 && request.sample_idx == 0 &&
        request.num_output_tokens() == 0 && forked_.insert(request.request_id).second) {
      for (uint32_t sample_idx = 1; sample_idx < static_cast<uint32_t>(request.sampling_params.n);
           ++sample_idx) {
        const RequestId child = child_id(request.request_id, sample_idx);
        scheduler_.fork_request(request.request_id, make_child_request(request, child, sample_idx));
        child_ids_.push_back(child);
        emit(child, history, sample_idx);
      }
    }
    emit(request.request_id, history, request.sample_idx);
  }

  void emit(RequestId request_id, const std::vector<int32_t>& history, uint32_t sample_idx) {
    const Request& request = scheduler_.request(request_id);
    const int32_t token_id = fake_next_token(history, sample_idx, vocab_size_, model_window_);
    if (token_id == kFakeEosTokenId && !request.sampling_params.ignore_eos) {
      scheduler_.finish_request(request_id, FinishReason::Stop);
      return;
    }
    scheduler_.append_token(request_id, token_id);
    if (scheduler_.has_reached_length(request_id)) {
      scheduler_.finish_request(request_id, FinishReason::Length);
    }
  }

  KvCacheManager kv_;
  std::unique_ptr<StatePool> state_pool_;
  Scheduler scheduler_;
  std::vector<std::vector<int32_t>> states_;  // [num_slots] the tokens a slot's state consumed
  int max_used_state_slots_ = 0;
  int num_state_copies_ = 0;
  std::vector<int32_t> memory_;  // [num_blocks * block_size] the token whose K/V a slot holds
  std::map<RequestId, std::vector<int32_t>> histories_;  // read by this step's forward pass
  int vocab_size_;
  int model_window_;
  std::vector<RequestId> request_ids_;
  std::vector<RequestId> child_ids_;
  std::set<RequestId> forked_;
  int num_steps_ = 0;
  int max_requests_in_step_ = 0;
  int max_tokens_in_step_ = 0;
  int num_block_copies_ = 0;
  int max_used_blocks_ = 0;
};

}  // namespace sluice::test
