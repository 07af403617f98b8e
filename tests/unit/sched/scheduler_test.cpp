#include "engine/sched/scheduler.h"

#include "engine/core/error.h"
#include "tests/unit/sched/fake_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

namespace sluice {
namespace {

using test::FakeEngine;
using Ids = std::vector<int32_t>;

Ids iota_tokens(int n, int32_t first = 100) {
  Ids tokens(static_cast<size_t>(n));
  std::iota(tokens.begin(), tokens.end(), first);
  return tokens;
}

SamplingParams greedy(int max_tokens, bool ignore_eos = true, int n = 1) {
  SamplingParams params;
  params.max_tokens = max_tokens;
  params.ignore_eos = ignore_eos;
  params.n = n;
  return params;
}

Ids table_of(const KvCacheManager& kv, RequestId request_id) {
  const auto table = kv.block_table(request_id);
  return Ids(table.begin(), table.end());
}

TEST(Scheduler, RespectsTheTokenBudgetAndMaxNumSeqsEveryStep) {
  FakeEngine engine({.max_num_seqs = 4, .max_num_batched_tokens = 24, .max_model_len = 256},
                    {.num_blocks = 200, .block_size = 4});
  std::mt19937 rng(7);
  for (RequestId id = 1; id <= 30; ++id) {
    const int prompt_len = std::uniform_int_distribution<int>(1, 50)(rng);
    const int max_tokens = std::uniform_int_distribution<int>(1, 20)(rng);
    ASSERT_TRUE(engine.add(id, iota_tokens(prompt_len, static_cast<int32_t>(id)),
                           greedy(max_tokens, false)));
  }
  engine.run();  // checks the limits and progress every step
  engine.expect_outputs_match_reference();
  // The caps were reached, so the checks above had something to hold back.
  EXPECT_EQ(engine.max_requests_in_step(), 4);
  EXPECT_EQ(engine.max_tokens_in_step(), 24);
  EXPECT_EQ(engine.kv().num_used_blocks(), 0);
}

TEST(Scheduler, ChunksAPromptLongerThanTheBudget) {
  FakeEngine engine({.max_num_batched_tokens = 16, .max_model_len = 512},
                    {.num_blocks = 64, .block_size = 16});
  ASSERT_TRUE(engine.add(1, iota_tokens(100), greedy(5)));
  std::vector<int> num_scheduled;
  std::vector<bool> needs_sample;
  while (engine.scheduler().has_unfinished()) {
    const SchedulerOutput output = engine.step();
    ASSERT_EQ(output.requests.size(), 1u);
    num_scheduled.push_back(output.requests[0].num_scheduled_tokens);
    needs_sample.push_back(output.requests[0].needs_sample);
  }
  EXPECT_EQ(num_scheduled, (std::vector<int>{16, 16, 16, 16, 16, 16, 4, 1, 1, 1, 1}));
  EXPECT_EQ(needs_sample, (std::vector<bool>{false, false, false, false, false, false, true, true,
                                             true, true, true}));
  engine.expect_outputs_match_reference();
  EXPECT_EQ(engine.scheduler().request(1).num_output_tokens(), 5);
}

TEST(Scheduler, DecodesRunBesideAChunkedPrefill) {
  FakeEngine engine({.max_num_batched_tokens = 8, .max_model_len = 512},
                    {.num_blocks = 64, .block_size = 4});
  ASSERT_TRUE(engine.add(1, iota_tokens(3), greedy(20)));
  engine.step();  // request 1's prompt
  ASSERT_TRUE(engine.add(2, iota_tokens(40, 7), greedy(3)));
  const SchedulerOutput output = engine.step();
  ASSERT_EQ(output.requests.size(), 2u);
  EXPECT_EQ(output.requests[0].request_id, 1u);  // the decode first
  EXPECT_FALSE(output.requests[0].is_prefill);
  EXPECT_EQ(output.requests[1].num_scheduled_tokens, 7);  // the rest of the budget
  EXPECT_TRUE(output.requests[1].is_prefill);
  engine.run();
  engine.expect_outputs_match_reference();
}

TEST(Scheduler, WithoutChunkedPrefillPromptsRunWholeOrAreRejected) {
  FakeEngine engine(
      {.max_num_batched_tokens = 16, .max_model_len = 512, .enable_chunked_prefill = false},
      {.num_blocks = 64, .block_size = 4});
  EXPECT_FALSE(engine.add(1, iota_tokens(17), greedy(4)));
  EXPECT_NE(engine.scheduler().request(1).error.find("chunked prefill is off"), std::string::npos);
  ASSERT_TRUE(engine.add(2, iota_tokens(16), greedy(4)));
  ASSERT_TRUE(engine.add(3, iota_tokens(10, 5), greedy(4)));
  const SchedulerOutput first = engine.step();
  EXPECT_EQ(first.failed_request_ids, (std::vector<RequestId>{1}));
  ASSERT_EQ(first.requests.size(), 1u);  // request 3's whole prompt does not fit beside it
  EXPECT_EQ(first.requests[0].num_scheduled_tokens, 16);
  engine.run();
  engine.expect_outputs_match_reference();
}

// A pool far too small for all requests at once: they preempt each other and are recomputed,
// and must still produce exactly what each produces alone.
TEST(Scheduler, PreemptionAndResumeGiveTheSameTokens) {
  FakeEngine engine({.max_num_batched_tokens = 64, .max_model_len = 512},
                    {.num_blocks = 10, .block_size = 4});
  for (RequestId id = 1; id <= 4; ++id) {
    ASSERT_TRUE(engine.add(id, iota_tokens(8, static_cast<int32_t>(10 * id)), greedy(24)));
  }
  engine.run();
  engine.expect_outputs_match_reference();
  EXPECT_GT(engine.scheduler().num_preemptions(), 0);
  for (RequestId id = 1; id <= 4; ++id) {
    EXPECT_EQ(engine.scheduler().request(id).finish_reason, FinishReason::Length);
    EXPECT_EQ(engine.scheduler().request(id).num_output_tokens(), 24);
  }
  EXPECT_EQ(engine.kv().num_used_blocks(), 0);
}

TEST(Scheduler, PreemptsTheMostRecentlyAdmittedRequest) {
  FakeEngine engine({.max_num_batched_tokens = 64, .max_model_len = 512},
                    {.num_blocks = 4, .block_size = 4});
  ASSERT_TRUE(engine.add(1, iota_tokens(4), greedy(30)));
  ASSERT_TRUE(engine.add(2, iota_tokens(4, 50), greedy(30)));
  ASSERT_TRUE(engine.add(3, iota_tokens(4, 90), greedy(30)));
  // Each step the requests each need one more block every 4 tokens; the first preemption must
  // hit request 3, which went back to the front of the waiting queue.
  while (engine.scheduler().num_preemptions() == 0) {
    const SchedulerOutput output = engine.step();
    if (!output.preempted_request_ids.empty()) {
      EXPECT_EQ(output.preempted_request_ids, (std::vector<RequestId>{3}));
      EXPECT_EQ(engine.scheduler().request(3).state, RequestState::Preempted);
      EXPECT_EQ(engine.scheduler().request(3).num_computed_tokens, 0);
      EXPECT_FALSE(engine.kv().has_request(3));
    }
    ASSERT_LT(engine.num_steps(), 100);
  }
  engine.run();
  engine.expect_outputs_match_reference();
}

// A preempted request goes back to the front of the waiting queue: it was admitted before
// anything still waiting and resumes before later arrivals.
TEST(Scheduler, PreemptedRequestResumesBeforeLaterArrivals) {
  FakeEngine engine({.max_num_batched_tokens = 64, .max_model_len = 512},
                    {.num_blocks = 4, .block_size = 4});
  for (RequestId id = 1; id <= 3; ++id) {
    ASSERT_TRUE(engine.add(id, iota_tokens(4, static_cast<int32_t>(40 * id)), greedy(8)));
  }
  engine.step();  // all three prompts, one block each
  ASSERT_TRUE(engine.add(4, iota_tokens(4, 200), greedy(8)));
  Scheduler& scheduler = engine.scheduler();
  std::vector<RequestId> admissions;
  while (scheduler.has_unfinished()) {
    std::vector<RequestId> queued;
    for (RequestId id = 1; id <= 4; ++id) {
      if (scheduler.request(id).state == RequestState::Waiting ||
          scheduler.request(id).state == RequestState::Preempted) {
        queued.push_back(id);
      }
    }
    const SchedulerOutput output = engine.step();
    for (const ScheduledRequest& scheduled : output.requests) {
      if (std::find(queued.begin(), queued.end(), scheduled.request_id) != queued.end()) {
        admissions.push_back(scheduled.request_id);
      }
    }
    ASSERT_LT(engine.num_steps(), 200);
  }
  EXPECT_GT(scheduler.request(3).num_preemptions, 0);
  const auto position = [&](RequestId id) {
    return std::find(admissions.begin(), admissions.end(), id) - admissions.begin();
  };
  ASSERT_LT(position(3), static_cast<long>(admissions.size()));
  EXPECT_LT(position(3), position(4));
  engine.expect_outputs_match_reference();
}

TEST(Scheduler, ForkedSamplesShareThePromptAndDivergeByCopyOnWrite) {
  FakeEngine engine({.max_num_batched_tokens = 64, .max_model_len = 512},
                    {.num_blocks = 64, .block_size = 4});
  ASSERT_TRUE(engine.add(1, iota_tokens(10), greedy(6, true, 3)));
  engine.step();  // the prompt; its sample forks two children
  const RequestId child1 = FakeEngine::child_id(1, 1);
  const RequestId child2 = FakeEngine::child_id(1, 2);
  const KvCacheManager& kv = engine.kv();
  const Ids parent_table = table_of(kv, 1);
  ASSERT_EQ(parent_table.size(), 3u);  // 10 tokens: two full blocks and 2 of 4 in the third
  EXPECT_EQ(table_of(kv, child1), parent_table);
  EXPECT_EQ(table_of(kv, child2), parent_table);
  for (const int32_t block_id : parent_table)
    EXPECT_EQ(kv.block_pool().block(block_id).ref_count, 3);
  EXPECT_EQ(engine.scheduler().request(child1).num_computed_tokens, 10);
  EXPECT_EQ(engine.scheduler().request(child1).state, RequestState::Running);

  const SchedulerOutput output = engine.step();  // each writes its first output token
  ASSERT_EQ(output.block_copies.size(), 2u);
  EXPECT_EQ(output.block_copies[0].src_block_id, parent_table[2]);
  EXPECT_EQ(output.block_copies[1].src_block_id, parent_table[2]);
  const Ids tables[] = {table_of(kv, 1), table_of(kv, child1), table_of(kv, child2)};
  for (const Ids& table : tables) {
    EXPECT_EQ(table[0], parent_table[0]);
    EXPECT_EQ(table[1], parent_table[1]);
  }
  EXPECT_NE(tables[0][2], tables[1][2]);
  EXPECT_NE(tables[0][2], tables[2][2]);
  EXPECT_NE(tables[1][2], tables[2][2]);

  engine.run();
  engine.expect_outputs_match_reference();
  const auto outputs_of = [&](RequestId id) {
    const auto span = engine.scheduler().request(id).output_token_ids();
    return Ids(span.begin(), span.end());
  };
  EXPECT_NE(outputs_of(1), outputs_of(child1));
  EXPECT_NE(outputs_of(1), outputs_of(child2));
  EXPECT_NE(outputs_of(child1), outputs_of(child2));
  EXPECT_EQ(kv.num_used_blocks(), 0);
}

TEST(Scheduler, RequestLongerThanThePoolFailsWhileOthersFinish) {
  // 8 blocks of 4: no request can hold more than 32 tokens' K/V.
  FakeEngine engine({.max_num_batched_tokens = 64, .max_model_len = 512},
                    {.num_blocks = 8, .block_size = 4});
  EXPECT_FALSE(engine.add(1, iota_tokens(40), greedy(5)));
  ASSERT_TRUE(engine.add(2, iota_tokens(10, 3), greedy(40)));
  ASSERT_TRUE(engine.add(3, iota_tokens(5, 60), greedy(5)));
  ASSERT_TRUE(engine.add(4, iota_tokens(5, 70), greedy(5)));
  const SchedulerOutput first = engine.step();
  EXPECT_EQ(first.failed_request_ids, (std::vector<RequestId>{1}));
  engine.run();
  Scheduler& scheduler = engine.scheduler();
  for (const RequestId id : {RequestId{1}, RequestId{2}}) {
    EXPECT_EQ(scheduler.request(id).finish_reason, FinishReason::Error);
    EXPECT_NE(scheduler.request(id).error.find("can never fit"), std::string::npos)
        << scheduler.request(id).error;
  }
  // Request 2 computed 32 tokens and sampled its 33rd; computing that one needs a 9th block.
  EXPECT_EQ(scheduler.request(2).num_tokens(), 33);
  EXPECT_EQ(scheduler.request(3).finish_reason, FinishReason::Length);
  EXPECT_EQ(scheduler.request(4).finish_reason, FinishReason::Length);
  engine.expect_outputs_match_reference();
  EXPECT_EQ(engine.kv().num_used_blocks(), 0);
}

// A prompt that fills the whole pool computes, but neither it nor its forked sample can ever
// take one more token: the parent fails while running, the preempted child while waiting.
TEST(Scheduler, SamplesOfAPromptThatFillsThePoolFailCleanly) {
  FakeEngine engine({.max_num_batched_tokens = 64, .max_model_len = 512},
                    {.num_blocks = 4, .block_size = 4});
  ASSERT_TRUE(engine.add(1, iota_tokens(16), greedy(5, true, 2)));
  engine.step();
  const RequestId child = FakeEngine::child_id(1, 1);
  const SchedulerOutput second = engine.step();
  EXPECT_EQ(second.preempted_request_ids, (std::vector<RequestId>{child}));
  EXPECT_EQ(second.failed_request_ids, (std::vector<RequestId>{1}));
  const SchedulerOutput third = engine.step();
  EXPECT_TRUE(third.requests.empty());
  EXPECT_EQ(third.failed_request_ids, (std::vector<RequestId>{child}));
  EXPECT_FALSE(engine.scheduler().has_unfinished());
  for (const RequestId id : {RequestId{1}, child}) {
    EXPECT_EQ(engine.scheduler().request(id).finish_reason, FinishReason::Error);
    EXPECT_NE(engine.scheduler().request(id).error.find("can never fit"), std::string::npos);
  }
  engine.expect_outputs_match_reference();
  EXPECT_EQ(engine.kv().num_used_blocks(), 0);
}

TEST(Scheduler, PrefixCacheSkipsASharedSystemPrompt) {
  FakeEngine engine({.max_num_batched_tokens = 256, .max_model_len = 512},
                    {.num_blocks = 64, .block_size = 4});
  const Ids system_prompt = iota_tokens(32, 500);
  const auto with_suffix = [&](Ids suffix) {
    Ids prompt = system_prompt;
    prompt.insert(prompt.end(), suffix.begin(), suffix.end());
    return prompt;
  };
  ASSERT_TRUE(engine.add(1, with_suffix({1, 2, 3}), greedy(4)));
  engine.run();
  ASSERT_TRUE(engine.add(2, with_suffix({4, 5}), greedy(4)));
  ASSERT_TRUE(engine.add(3, with_suffix({6, 7, 8, 9}), greedy(4)));
  const SchedulerOutput output = engine.step();
  ASSERT_EQ(output.requests.size(), 2u);
  for (const ScheduledRequest& scheduled : output.requests) {
    EXPECT_EQ(scheduled.num_computed_tokens, 32);
  }
  EXPECT_EQ(output.total_num_scheduled_tokens, 2 + 4);
  const PrefixCacheStats& stats = engine.kv().prefix_cache_stats();
  EXPECT_EQ(stats.num_queries, 3);
  EXPECT_EQ(stats.num_query_tokens, 35 + 34 + 36);
  EXPECT_EQ(stats.num_hit_tokens, 64);
  engine.run();
  engine.expect_outputs_match_reference();
}

TEST(Scheduler, FinishesWithLengthAtMaxModelLen) {
  FakeEngine engine({.max_num_batched_tokens = 64, .max_model_len = 16},
                    {.num_blocks = 64, .block_size = 4});
  ASSERT_TRUE(engine.add(1, iota_tokens(10), greedy(100)));
  engine.run();
  const Request& request = engine.scheduler().request(1);
  EXPECT_EQ(request.finish_reason, FinishReason::Length);
  EXPECT_EQ(request.num_tokens(), 16);
  engine.expect_outputs_match_reference();
}

TEST(Scheduler, StopsAtEos) {
  // A vocabulary of 8 makes the fake model's EOS (token 0) likely within a few tokens.
  FakeEngine engine({.max_num_batched_tokens = 64, .max_model_len = 512},
                    {.num_blocks = 64, .block_size = 4}, 8);
  for (RequestId id = 1; id <= 10; ++id) {
    ASSERT_TRUE(engine.add(id, iota_tokens(5, static_cast<int32_t>(id)), greedy(100, false)));
  }
  engine.run();
  engine.expect_outputs_match_reference();
  int num_stopped = 0;
  for (RequestId id = 1; id <= 10; ++id) {
    num_stopped += engine.scheduler().request(id).finish_reason == FinishReason::Stop;
  }
  EXPECT_GT(num_stopped, 0);
}

TEST(Scheduler, AbortFreesBlocksOfRunningAndWaitingRequests) {
  FakeEngine engine({.max_num_seqs = 1, .max_num_batched_tokens = 64, .max_model_len = 512},
                    {.num_blocks = 16, .block_size = 4});
  ASSERT_TRUE(engine.add(1, iota_tokens(10), greedy(10)));
  ASSERT_TRUE(engine.add(2, iota_tokens(10, 50), greedy(10)));
  engine.step();
  Scheduler& scheduler = engine.scheduler();
  EXPECT_EQ(scheduler.num_running(), 1);
  EXPECT_EQ(scheduler.num_waiting(), 1);
  EXPECT_EQ(engine.kv().num_used_blocks(), 3);
  EXPECT_TRUE(scheduler.abort_request(2));  // waiting
  EXPECT_TRUE(scheduler.abort_request(1));  // running
  scheduler.check_invariants();
  EXPECT_EQ(engine.kv().num_used_blocks(), 0);
  EXPECT_EQ(scheduler.request(1).finish_reason, FinishReason::Abort);
  EXPECT_EQ(scheduler.request(2).finish_reason, FinishReason::Abort);
  EXPECT_FALSE(scheduler.abort_request(1));
  EXPECT_FALSE(scheduler.abort_request(99));
  EXPECT_FALSE(scheduler.has_unfinished());
  EXPECT_EQ(scheduler.num_finished(), 2);
  const std::unique_ptr<Request> released = scheduler.release_finished(1);
  EXPECT_EQ(released->request_id, 1u);
  EXPECT_EQ(scheduler.find_request(1), nullptr);
}

TEST(Scheduler, RejectsRequestsThatCanNeverRunAndReportsThem) {
  KvCacheManager kv({.num_blocks = 4, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 64, .max_model_len = 12}, kv);
  EXPECT_FALSE(scheduler.add_request(make_request(1, {}, greedy(4), 1)));
  EXPECT_FALSE(scheduler.add_request(make_request(2, iota_tokens(12), greedy(4), 2)));
  EXPECT_FALSE(scheduler.add_request(make_request(3, iota_tokens(5), greedy(0), 3)));
  EXPECT_TRUE(scheduler.add_request(make_request(4, iota_tokens(11), greedy(4), 4)));
  for (const RequestId id : {RequestId{1}, RequestId{2}, RequestId{3}}) {
    EXPECT_EQ(scheduler.request(id).finish_reason, FinishReason::Error);
    EXPECT_FALSE(scheduler.request(id).error.empty());
  }
  EXPECT_NE(scheduler.request(2).error.find("max_model_len"), std::string::npos);
  // Reported once, by the next step.
  EXPECT_TRUE(scheduler.has_unfinished());
  const SchedulerOutput first = scheduler.schedule();
  EXPECT_EQ(first.failed_request_ids, (std::vector<RequestId>{1, 2, 3}));
  scheduler.on_step_done(first);
  scheduler.finish_request(4, FinishReason::Abort);
  EXPECT_FALSE(scheduler.has_unfinished());
  EXPECT_TRUE(scheduler.schedule().failed_request_ids.empty());

  KvCacheManager small({.num_blocks = 2, .block_size = 4});
  Scheduler too_small({.max_num_batched_tokens = 64, .max_model_len = 512}, small);
  EXPECT_FALSE(too_small.add_request(make_request(1, iota_tokens(9), greedy(4), 1)));
  EXPECT_NE(too_small.request(1).error.find("can never fit"), std::string::npos);
}

TEST(Scheduler, ThrowsWhenTheEngineBreaksTheContract) {
  KvCacheManager kv({.num_blocks = 16, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 64, .max_model_len = 64}, kv);
  ASSERT_TRUE(scheduler.add_request(make_request(1, iota_tokens(5), greedy(4), 1)));
  EXPECT_THROW(scheduler.add_request(make_request(1, iota_tokens(5), greedy(4), 1)), Error);
  auto with_outputs = make_request(2, iota_tokens(5), greedy(4), 2);
  with_outputs->token_ids.push_back(1);
  EXPECT_THROW(scheduler.add_request(std::move(with_outputs)), Error);
  EXPECT_THROW(scheduler.append_token(1, 7), Error);  // waiting: no sample due
  const SchedulerOutput output = scheduler.schedule();
  EXPECT_THROW(scheduler.schedule(), Error);  // on_step_done first
  EXPECT_FALSE(scheduler.can_fork_request(1, *make_child_request(scheduler.request(1), 9, 1)));
  EXPECT_THROW(scheduler.append_token(1, 7), Error);  // not computed yet
  scheduler.on_step_done(output);
  scheduler.append_token(1, 7);
  EXPECT_THROW(scheduler.append_token(1, 8), Error);  // the new token is not computed yet
  EXPECT_THROW(scheduler.finish_request(42, FinishReason::Stop), Error);
  EXPECT_THROW(scheduler.finish_request(1, FinishReason::None), Error);
  EXPECT_THROW(scheduler.release_finished(1), Error);
  EXPECT_THROW(Scheduler({.max_model_len = 0}, kv), Error);
  scheduler.check_invariants();
}

TEST(Scheduler, ForkRequiresTheParentsComputedTokens) {
  KvCacheManager kv({.num_blocks = 16, .block_size = 4});
  Scheduler scheduler({.max_num_batched_tokens = 64, .max_model_len = 64}, kv);
  ASSERT_TRUE(scheduler.add_request(make_request(1, iota_tokens(6), greedy(4), 1)));
  scheduler.on_step_done(scheduler.schedule());
  const Request& parent = scheduler.request(1);
  auto stranger = make_child_request(parent, 2, 1);
  stranger->token_ids[3] = 999;
  EXPECT_FALSE(scheduler.can_fork_request(1, *stranger));
  EXPECT_THROW(scheduler.fork_request(1, std::move(stranger)), Error);
  EXPECT_FALSE(scheduler.can_fork_request(1, *make_child_request(parent, 1, 1)));  // id in use
  EXPECT_FALSE(scheduler.can_fork_request(7, *make_child_request(parent, 3, 1)));  // no parent
  ASSERT_TRUE(scheduler.can_fork_request(1, *make_child_request(parent, 3, 1)));
  scheduler.fork_request(1, make_child_request(parent, 3, 1));
  scheduler.check_invariants();
  EXPECT_EQ(scheduler.num_running(), 2);
  EXPECT_EQ(table_of(kv, 3), table_of(kv, 1));
}

// Sliding windows. The fake model sees only the last `window` tokens, and every block a step's
// queries see must still be held (fake_engine.h), so a block given back too early fails there.

// The outputs of every request of engine, in request id order.
std::vector<Ids> all_outputs(FakeEngine& engine) {
  std::vector<Ids> outputs;
  for (const RequestId id : engine.all_request_ids()) {
    const Request& request = engine.scheduler().request(id);
    outputs.emplace_back(request.output_token_ids().begin(), request.output_token_ids().end());
  }
  return outputs;
}

// 100 tokens through a pool of 20 slots: with window 8 the request holds at most what its
// window and the current piece span, and alone it takes pieces shorter than the budget (16)
// when the window and a whole piece would not fit (2 + 4 blocks); without freeing it could never
// fit.
TEST(Scheduler, RequestLongerThanThePoolRunsWithinItsWindow) {
  const SchedulerConfig config{.max_num_batched_tokens = 16, .max_model_len = 512};
  FakeEngine engine(config, {.num_blocks = 5, .block_size = 4, .sliding_window = 8});
  ASSERT_TRUE(engine.add(1, iota_tokens(60), greedy(40)));
  engine.run();
  EXPECT_EQ(engine.scheduler().request(1).finish_reason, FinishReason::Length);
  EXPECT_EQ(engine.scheduler().request(1).num_tokens(), 100);
  engine.expect_outputs_match_reference();
  EXPECT_EQ(engine.kv().num_used_blocks(), 0);

  // The same model with the whole context kept: 60 prompt tokens need 15 blocks.
  FakeEngine unfreed(config, {.num_blocks = 5, .block_size = 4}, 1000, 8);
  EXPECT_FALSE(unfreed.add(1, iota_tokens(60), greedy(40)));
  EXPECT_NE(unfreed.scheduler().request(1).error.find("can never fit"), std::string::npos);
}

// A pool with room for the whole request, to compare the blocks held with and without freeing.
TEST(Scheduler, LongRequestHoldsABoundedNumberOfBlocks) {
  const SchedulerConfig config{.max_num_batched_tokens = 16, .max_model_len = 1024};
  FakeEngine freed(config, {.num_blocks = 200, .block_size = 4, .sliding_window = 8});
  FakeEngine unfreed(config, {.num_blocks = 200, .block_size = 4}, 1000, 8);
  for (FakeEngine* engine : {&freed, &unfreed}) {
    ASSERT_TRUE(engine->add(1, iota_tokens(300), greedy(100)));
    engine->run();
    engine->expect_outputs_match_reference();
  }
  EXPECT_EQ(all_outputs(freed), all_outputs(unfreed));
  // A step holds the window before its piece (7 positions) and the piece (16): 23 positions,
  // which span at most 7 blocks of 4.
  EXPECT_LE(freed.max_used_blocks(), 7);
  EXPECT_EQ(unfreed.max_used_blocks(), 100);
}

// Many requests sharing a system prompt (prefix hits), with n = 2 samples (forks) and a pool
// small enough to preempt: the same outputs as a run that keeps every block.
TEST(Scheduler, WindowedRunMatchesTheUnfreedRunThroughPreemptionAndPrefixHits) {
  const SchedulerConfig config{
      .max_num_seqs = 6, .max_num_batched_tokens = 24, .max_model_len = 256};
  FakeEngine freed(config, {.num_blocks = 14, .block_size = 4, .sliding_window = 10});
  FakeEngine unfreed(config, {.num_blocks = 60, .block_size = 4}, 1000, 10);
  std::mt19937 rng(12);
  const Ids system_prompt = iota_tokens(30, 500);
  for (RequestId id = 1; id <= 16; ++id) {
    Ids prompt = system_prompt;
    const Ids tail =
        iota_tokens(std::uniform_int_distribution<int>(1, 20)(rng), static_cast<int32_t>(id * 40));
    prompt.insert(prompt.end(), tail.begin(), tail.end());
    const SamplingParams params =
        greedy(std::uniform_int_distribution<int>(5, 40)(rng), false, id % 3 == 0 ? 2 : 1);
    for (FakeEngine* engine : {&freed, &unfreed}) ASSERT_TRUE(engine->add(id, prompt, params));
  }
  for (FakeEngine* engine : {&freed, &unfreed}) {
    engine->run();
    engine->expect_outputs_match_reference();
    EXPECT_EQ(engine->kv().num_used_blocks(), 0);
    engine->kv().check_invariants();
  }
  EXPECT_EQ(all_outputs(freed), all_outputs(unfreed));
  EXPECT_GT(freed.scheduler().num_preemptions(), 0);
  EXPECT_GT(freed.kv().prefix_cache_stats().num_hit_tokens, 0);
  for (const RequestId id : freed.all_request_ids())
    EXPECT_NE(freed.scheduler().request(id).finish_reason, FinishReason::Error) << id;
}

// Blocks a request gave back during its run keep their hashes: a later request with the same
// prompt starts from them, and its outputs show their K/V was intact.
TEST(Scheduler, PrefixHitsOnBlocksGivenBackOutsideTheWindow) {
  FakeEngine engine({.max_num_batched_tokens = 64, .max_model_len = 512},
                    {.num_blocks = 64, .block_size = 4, .sliding_window = 6});
  ASSERT_TRUE(engine.add(1, iota_tokens(41), greedy(3)));
  // The whole prompt in one step; the next query (position 41) sees 36..41, so of blocks 0..10
  // only 9 and 10 stay.
  engine.step();
  EXPECT_EQ(engine.kv().num_used_blocks(), 2);
  EXPECT_EQ(engine.kv().num_cached_free_blocks(), 9);
  engine.run();
  ASSERT_TRUE(engine.add(2, iota_tokens(41), greedy(3)));
  const SchedulerOutput output = engine.step();
  ASSERT_EQ(output.requests.size(), 1u);
  EXPECT_EQ(output.requests[0].num_computed_tokens, 40);  // 10 blocks hit, the last token computed
  engine.run();
  engine.expect_outputs_match_reference();
  EXPECT_EQ(all_outputs(engine)[0], all_outputs(engine)[1]);
}

}  // namespace
}  // namespace sluice
