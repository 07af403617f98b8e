// Random workloads over random scheduler and cache configurations, driven by the fake engine:
// requests arrive over time, share system prompts, fork n samples, get aborted, and compete
// for pools from tiny to roomy. Every step is checked (budget, max_num_seqs, progress, cache
// contents, invariants); at the end every request must match its solo reference run, and a
// request may fail exactly when it can never fit. The windowed seeds give the model a sliding
// window of 1 to 40 tokens and the cache frees the blocks outside it, with pools that may hold
// less than one request's tokens but more than its window.
#include "engine/sched/scheduler.h"

#include "engine/core/error.h"
#include "tests/unit/sched/fake_engine.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace sluice {
namespace {

using test::FakeEngine;

class Workload {
 public:
  Workload(uint32_t seed, bool has_window) : rng_(seed) {
    scheduler_config_.max_num_seqs = uniform(1, 8);
    scheduler_config_.max_num_batched_tokens = uniform(1, 64);
    scheduler_config_.max_model_len = uniform(16, 160);
    scheduler_config_.enable_chunked_prefill = uniform(0, 3) != 0;
    kv_cache_config_.block_size = 1 << uniform(0, 4);
    // From a pool that holds less than one request to one that holds many.
    kv_cache_config_.num_blocks = uniform(16, 320) / kv_cache_config_.block_size + 1;
    kv_cache_config_.enable_prefix_caching = uniform(0, 3) != 0;
    if (has_window) kv_cache_config_.sliding_window = uniform(1, 40);
    for (int i = 0; i < 2; ++i) system_prompts_.push_back(random_tokens(uniform(0, 40)));
  }

  void run() {
    FakeEngine engine(scheduler_config_, kv_cache_config_, 50);
    const int num_requests = uniform(1, 30);
    RequestId next_id = 1;
    int num_steps = 0;
    while (next_id <= static_cast<RequestId>(num_requests) || engine.scheduler().has_unfinished()) {
      // Arrivals over time, so admission happens while others run.
      while (next_id <= static_cast<RequestId>(num_requests) && uniform(0, 2) == 0) {
        engine.add(next_id++, random_prompt(), random_params());
      }
      if (uniform(0, 40) == 0) abort_one(engine, next_id);
      if (engine.scheduler().has_unfinished()) engine.step();
      ASSERT_FALSE(testing::Test::HasFailure()) << describe();
      ASSERT_LT(++num_steps, 200000) << describe();
    }
    engine.expect_outputs_match_reference();
    for (const RequestId request_id : engine.all_request_ids()) {
      const Request& request = engine.scheduler().request(request_id);
      if (request.finish_reason == FinishReason::Abort) continue;
      EXPECT_EQ(request.finish_reason == FinishReason::Error, can_never_fit(engine, request))
          << "request " << request_id << " " << to_string(request.finish_reason) << " "
          << request.error << "; " << describe();
    }
    EXPECT_EQ(engine.kv().num_used_blocks(), 0) << describe();
    engine.kv().check_invariants();
  }

 private:
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  std::vector<int32_t> random_tokens(int n) {
    std::vector<int32_t> tokens(static_cast<size_t>(n));
    for (int32_t& t : tokens) t = uniform(1, 49);
    return tokens;
  }
  std::vector<int32_t> random_prompt() {
    std::vector<int32_t> prompt = system_prompts_[uniform(0, 1)];
    const std::vector<int32_t> tail = random_tokens(uniform(0, 30));
    prompt.insert(prompt.end(), tail.begin(), tail.end());
    return prompt;
  }
  SamplingParams random_params() {
    SamplingParams params;
    params.n = std::max(1, uniform(-2, 3));
    params.max_tokens = uniform(0, 40);
    params.ignore_eos = uniform(0, 1) == 1;
    return params;
  }
  void abort_one(FakeEngine& engine, RequestId next_id) {
    if (next_id == 1) return;
    const RequestId request_id = static_cast<RequestId>(uniform(1, static_cast<int>(next_id) - 1));
    engine.scheduler().abort_request(request_id);
  }

  // The blocks the K/V of positions first..last span.
  int num_blocks_spanned(int first, int last) const {
    return last / kv_cache_config_.block_size - first / kv_cache_config_.block_size + 1;
  }

  // The most blocks computing num_tokens tokens one at a time holds at once: all of them, or
  // with a window the most that one query's window spans.
  int num_blocks_held(int num_tokens) const {
    const int window = kv_cache_config_.sliding_window;
    int most = 0;
    for (int position = 0; position < num_tokens; ++position)
      most = std::max(
          most, num_blocks_spanned(window > 0 ? std::max(0, position - window + 1) : 0, position));
    return most;
  }

  // The test's own account of when a request cannot run: rejected at once, or its solo run
  // holds more K/V than the whole pool (all tokens for a stop, all but the last for length).
  bool can_never_fit(FakeEngine& engine, const Request& request) const {
    const int num_prompt_tokens = request.num_prompt_tokens;
    const auto num_blocks_for = [&](int num_tokens) {
      return (num_tokens + kv_cache_config_.block_size - 1) / kv_cache_config_.block_size;
    };
    // A prompt that may not be chunked holds all its blocks in its one step.
    const int num_prompt_blocks = scheduler_config_.enable_chunked_prefill
                                      ? num_blocks_held(num_prompt_tokens)
                                      : num_blocks_for(num_prompt_tokens);
    if (num_prompt_tokens == 0 || num_prompt_tokens >= scheduler_config_.max_model_len ||
        num_prompt_blocks > kv_cache_config_.num_blocks ||
        (!scheduler_config_.enable_chunked_prefill &&
         num_prompt_tokens > scheduler_config_.max_num_batched_tokens) ||
        request.sampling_params.max_tokens < 1) {
      return true;
    }
    const test::ReferenceRun reference = engine.reference_of(request);
    const int num_tokens = num_prompt_tokens + static_cast<int>(reference.output_token_ids.size());
    const int num_needed =
        reference.finish_reason == FinishReason::Stop ? num_tokens : num_tokens - 1;
    return num_blocks_held(num_needed) > kv_cache_config_.num_blocks;
  }

  std::string describe() const {
    return str_cat("max_num_seqs ", scheduler_config_.max_num_seqs, ", max_num_batched_tokens ",
                   scheduler_config_.max_num_batched_tokens, ", max_model_len ",
                   scheduler_config_.max_model_len, ", chunked ",
                   scheduler_config_.enable_chunked_prefill, ", ", kv_cache_config_.num_blocks,
                   " blocks of ", kv_cache_config_.block_size, ", prefix caching ",
                   kv_cache_config_.enable_prefix_caching, ", sliding window ",
                   kv_cache_config_.sliding_window);
  }

  std::mt19937 rng_;
  SchedulerConfig scheduler_config_;
  KvCacheConfig kv_cache_config_;
  std::vector<std::vector<int32_t>> system_prompts_;
};

class SchedulerStress : public testing::TestWithParam<uint32_t> {};

TEST_P(SchedulerStress, RandomWorkloadMatchesReferenceAndNeverStalls) {
  Workload(GetParam(), false).run();
}

TEST_P(SchedulerStress, RandomWorkloadWithASlidingWindowMatchesReference) {
  Workload(GetParam(), true).run();
}

INSTANTIATE_TEST_SUITE_P(Seeds, SchedulerStress, testing::Range(uint32_t{1}, uint32_t{201}));

}  // namespace
}  // namespace sluice
