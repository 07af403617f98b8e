// The scheduler over a hybrid model's state slots (StatePool), on the fake model of
// fake_engine.h whose next token comes from the request's state slot: admission waits for a
// slot, preemption gives it back, forks copy the parent's state, and prefix hits are cut to a
// state checkpoint, which the 2nd request sharing a prefix saves and the 3rd starts from.
#include "engine/sched/scheduler.h"

#include "tests/unit/sched/fake_engine.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <vector>

namespace sluice {
namespace {

using test::FakeEngine;
using Ids = std::vector<int32_t>;

Ids state_iota_ids(int n, int32_t first) {
  Ids tokens(static_cast<size_t>(n));
  std::iota(tokens.begin(), tokens.end(), first);
  return tokens;
}

// A 40-token head (10 blocks of 4) shared by every prompt of a family, then a tail of its own.
Ids state_shared_head_prompt(int32_t family, int32_t tail) {
  Ids prompt = state_iota_ids(40, 100 + 1000 * family);
  const Ids rest = state_iota_ids(5, 5000 + 10 * tail);
  prompt.insert(prompt.end(), rest.begin(), rest.end());
  return prompt;
}

SamplingParams state_greedy(int max_tokens, int n = 1) {
  SamplingParams params;
  params.max_tokens = max_tokens;
  params.ignore_eos = true;
  params.n = n;
  return params;
}

FakeEngine state_hybrid_engine(const SchedulerConfig& scheduler, const KvCacheConfig& kv,
                               const StatePoolConfig& state) {
  return FakeEngine(scheduler, kv, 1000, -1, state);
}

TEST(SchedulerState, MoreRequestsThanSlotsWaitForOne) {
  FakeEngine engine =
      state_hybrid_engine({.max_num_seqs = 8, .max_num_batched_tokens = 64, .max_model_len = 256},
                          {.num_blocks = 200, .block_size = 4}, {.num_slots = 3});
  for (RequestId id = 1; id <= 10; ++id)
    ASSERT_TRUE(engine.add(id, state_iota_ids(5 + static_cast<int>(id), static_cast<int32_t>(id)),
                           state_greedy(6)));
  const SchedulerOutput first = engine.step();
  EXPECT_EQ(first.requests.size(), 3u);  // slots, not max_num_seqs, bound the admission
  EXPECT_EQ(engine.scheduler().num_waiting(), 7);
  engine.run();
  engine.expect_outputs_match_reference();
  EXPECT_EQ(engine.max_used_state_slots(), 3);
  EXPECT_EQ(engine.scheduler().num_preemptions(), 0);
  EXPECT_EQ(engine.state_pool()->num_request_slots(), 0);
}

TEST(SchedulerState, PreemptionGivesTheSlotBackAndResumesFromTheStart) {
  FakeEngine engine =
      state_hybrid_engine({.max_num_seqs = 6, .max_num_batched_tokens = 16, .max_model_len = 256},
                          {.num_blocks = 14, .block_size = 4}, {.num_slots = 6});
  for (RequestId id = 1; id <= 12; ++id)
    ASSERT_TRUE(
        engine.add(id, state_iota_ids(6 + 3 * static_cast<int>(id % 4), static_cast<int32_t>(id)),
                   state_greedy(12)));
  engine.run();
  engine.expect_outputs_match_reference();
  EXPECT_GT(engine.scheduler().num_preemptions(), 0);
  EXPECT_EQ(engine.state_pool()->num_request_slots(), 0);
  EXPECT_EQ(engine.state_pool()->num_free_slots(), 6);
}

TEST(SchedulerState, ForkedSamplesGetTheirOwnSlotWithTheParentsState) {
  FakeEngine engine = state_hybrid_engine({.max_num_batched_tokens = 64, .max_model_len = 256},
                                          {.num_blocks = 64, .block_size = 4}, {.num_slots = 4});
  ASSERT_TRUE(engine.add(1, state_iota_ids(10, 3), state_greedy(8, 3)));
  engine.run();
  engine.expect_outputs_match_reference();
  EXPECT_EQ(engine.all_request_ids().size(), 3u);
  EXPECT_EQ(engine.num_state_copies(), 2);  // one per child, none redone
  EXPECT_EQ(engine.scheduler().num_preemptions(), 0);
  EXPECT_EQ(engine.max_used_state_slots(), 3);
}

TEST(SchedulerState, AForkWithoutAFreeSlotStartsTheChildOver) {
  FakeEngine engine = state_hybrid_engine({.max_num_batched_tokens = 64, .max_model_len = 256},
                                          {.num_blocks = 64, .block_size = 4}, {.num_slots = 2});
  ASSERT_TRUE(engine.add(1, state_iota_ids(10, 3), state_greedy(8, 3)));
  engine.run();
  engine.expect_outputs_match_reference();
  EXPECT_EQ(engine.num_state_copies(), 1);             // the child that found a slot
  EXPECT_EQ(engine.scheduler().num_preemptions(), 1);  // the one that did not, recomputed
  EXPECT_EQ(engine.max_used_state_slots(), 2);
}

TEST(SchedulerState, TheSecondSharedPrefixSavesACheckpointAndTheThirdStartsFromIt) {
  FakeEngine engine = state_hybrid_engine({.max_num_batched_tokens = 64, .max_model_len = 256},
                                          {.num_blocks = 100, .block_size = 4},
                                          {.num_slots = 4, .max_checkpoints = 2});
  ASSERT_TRUE(engine.add(1, state_shared_head_prompt(0, 1), state_greedy(3)));
  engine.run();
  // The 2nd: its blocks hit 40 tokens but no state is known there, so it computes from 0 and
  // its first piece ends exactly at 40, where its state is saved.
  ASSERT_TRUE(engine.add(2, state_shared_head_prompt(0, 2), state_greedy(3)));
  const SchedulerOutput second = engine.step();
  ASSERT_EQ(second.requests.size(), 1u);
  EXPECT_EQ(second.requests[0].num_computed_tokens, 0);
  EXPECT_EQ(second.requests[0].num_scheduled_tokens, 40);
  EXPECT_EQ(engine.state_pool()->num_checkpoints(), 1);
  const SchedulerOutput save = engine.step();
  ASSERT_EQ(save.state_copies.size(), 1u);  // the save, before the rest of the prompt
  EXPECT_EQ(save.state_copies[0].src_slot, second.requests[0].state_slot);
  EXPECT_EQ(save.requests[0].num_computed_tokens, 40);
  engine.run();
  // The 3rd starts at 40 from a copy of the checkpoint.
  ASSERT_TRUE(engine.add(3, state_shared_head_prompt(0, 3), state_greedy(3)));
  const SchedulerOutput third = engine.step();
  ASSERT_EQ(third.requests.size(), 1u);
  EXPECT_EQ(third.requests[0].num_computed_tokens, 40);
  EXPECT_EQ(third.requests[0].num_scheduled_tokens, 5);
  ASSERT_EQ(third.state_copies.size(), 1u);
  EXPECT_EQ(third.state_copies[0].src_slot, save.state_copies[0].dst_slot);
  EXPECT_EQ(third.state_copies[0].dst_slot, third.requests[0].state_slot);
  engine.run();
  engine.expect_outputs_match_reference();
  EXPECT_EQ(engine.state_pool()->checkpoint_stats().num_saved, 1);
  EXPECT_EQ(engine.state_pool()->checkpoint_stats().num_restored, 1);
  EXPECT_EQ(engine.kv().prefix_cache_stats().num_hit_tokens, 40);
}

TEST(SchedulerState, WithoutCheckpointsABlockHitIsNotUsed) {
  FakeEngine engine = state_hybrid_engine({.max_num_batched_tokens = 64, .max_model_len = 256},
                                          {.num_blocks = 100, .block_size = 4},
                                          {.num_slots = 4, .max_checkpoints = 0});
  ASSERT_TRUE(engine.add(1, state_shared_head_prompt(0, 1), state_greedy(3)));
  engine.run();
  ASSERT_TRUE(engine.add(2, state_shared_head_prompt(0, 2), state_greedy(3)));
  const SchedulerOutput second = engine.step();
  EXPECT_EQ(second.requests[0].num_computed_tokens, 0);
  EXPECT_EQ(second.requests[0].num_scheduled_tokens, 45);  // whole: no checkpoint is due
  engine.run();
  engine.expect_outputs_match_reference();
  EXPECT_EQ(engine.kv().prefix_cache_stats().num_hit_tokens, 0);
}

TEST(SchedulerState, TheLeastRecentlyUsedCheckpointIsEvictedAndSavedAgainWhenNeeded) {
  FakeEngine engine = state_hybrid_engine({.max_num_batched_tokens = 64, .max_model_len = 256},
                                          {.num_blocks = 200, .block_size = 4},
                                          {.num_slots = 4, .max_checkpoints = 1});
  const auto run_one = [&](RequestId id, int32_t family) {
    EXPECT_TRUE(engine.add(id, state_shared_head_prompt(family, static_cast<int32_t>(id)),
                           state_greedy(2)));
    const SchedulerOutput first = engine.step();
    engine.run();
    return first.requests.at(0);
  };
  run_one(1, 0);
  run_one(2, 0);  // saves family 0's checkpoint
  EXPECT_EQ(run_one(3, 0).num_computed_tokens, 40);
  run_one(4, 1);
  run_one(5, 1);  // saves family 1's, evicting family 0's
  EXPECT_EQ(engine.state_pool()->checkpoint_stats().num_evicted, 1);
  const ScheduledRequest again = run_one(6, 0);  // blocks still hit, the state does not
  EXPECT_EQ(again.num_computed_tokens, 0);
  EXPECT_EQ(again.num_scheduled_tokens, 40);  // so it saves family 0's again
  EXPECT_EQ(run_one(7, 0).num_computed_tokens, 40);
  engine.expect_outputs_match_reference();
  EXPECT_EQ(engine.state_pool()->checkpoint_stats().num_saved, 3);
}

TEST(SchedulerState, AModelWithoutStateUsesTheWholeBlockHitAsBefore) {
  FakeEngine engine({.max_num_batched_tokens = 64, .max_model_len = 256},
                    {.num_blocks = 100, .block_size = 4});
  ASSERT_TRUE(engine.add(1, state_shared_head_prompt(0, 1), state_greedy(3)));
  engine.run();
  ASSERT_TRUE(engine.add(2, state_shared_head_prompt(0, 2), state_greedy(3)));
  const SchedulerOutput second = engine.step();  // FakeEngine checks: no slots, no state copies
  EXPECT_EQ(second.requests[0].num_computed_tokens, 40);
  EXPECT_EQ(second.requests[0].num_scheduled_tokens, 5);
  EXPECT_EQ(second.requests[0].state_slot, -1);
  engine.run();
  engine.expect_outputs_match_reference();
}

// Everything at once: shared heads, n > 1, a small pool (preemption), a small budget (chunks),
// few slots and checkpoints. Every output is the reference's.
TEST(SchedulerState, MixedWorkloadsMatchTheReference) {
  for (const int num_slots : {3, 5, 9}) {
    FakeEngine engine = state_hybrid_engine(
        {.max_num_seqs = 6, .max_num_batched_tokens = 24, .max_model_len = 256},
        {.num_blocks = 40, .block_size = 4}, {.num_slots = num_slots, .max_checkpoints = 2});
    std::mt19937 rng(static_cast<unsigned>(num_slots));
    for (RequestId id = 1; id <= 24; ++id) {
      const int32_t family = std::uniform_int_distribution<int32_t>(0, 2)(rng);
      const int n = id % 5 == 0 ? 2 : 1;
      ASSERT_TRUE(engine.add(id, state_shared_head_prompt(family, static_cast<int32_t>(id)),
                             state_greedy(std::uniform_int_distribution<int>(1, 10)(rng), n)));
      if (id % 3 == 0) engine.step();
    }
    engine.run();
    engine.expect_outputs_match_reference();
    EXPECT_GT(engine.scheduler().num_preemptions(), 0) << num_slots;
    // With 3 slots the running requests hold them all: no spare one for a checkpoint to last.
    if (num_slots > 3) {
      EXPECT_GT(engine.state_pool()->checkpoint_stats().num_restored, 0) << num_slots;
    }
    EXPECT_EQ(engine.state_pool()->num_request_slots(), 0);
  }
}

}  // namespace
}  // namespace sluice
