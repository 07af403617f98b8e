// The engine service where its clients meet: a job and HTTP requests in one step, submits racing
// the queue cap, an abort racing a finish, a client that leaves while its request is preempted.
// Each race is lined up with EventTurnstile (the service's thread stopped inside a request's
// on_event), never with a sleep, so each test takes the same path on every run.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <latch>
#include <map>
#include <thread>

#include "engine/service/engine_service.h"
#include "tests/unit/engine/engine_test_util.h"
#include "tests/unit/service/service_test_util.h"

namespace sluice::test {
namespace {

// Each prompt's tokens run alone on a plain engine (greedy, the given sampling).
std::vector<std::vector<int32_t>> tokens_alone(const std::vector<std::vector<int32_t>>& prompts,
                                               const std::vector<SamplingParams>& params) {
  const StoriesModel model;
  auto engine = model.make_engine(EngineConfig{});
  std::vector<std::vector<int32_t>> out;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const auto finished = run_all(*engine, {prompts[i]}, params[i]);
    out.push_back(finished.at({0, 0}).output_token_ids);
  }
  return out;
}

std::vector<int32_t> ids_of(const std::vector<TokenDelta>& tokens) {
  std::vector<int32_t> ids;
  for (const auto& token : tokens) ids.push_back(token.token_id);
  return ids;
}

// A dataset job runs; an HTTP request with two prompts arrives in the middle of it and joins its
// batch: the job's last steps run all three. The job is served as GenerationJob is (no token
// events; a callback that tells its loop something arrived), the HTTP prompts as RequestGroup's
// are (token events, read as they come). A service that kept later clients out while a job runs
// (admitting only when the engine is idle, or one client's requests to their end before
// another's), that sent a job token events, or that mixed up the clients' tokens fails here.
TEST(EngineServiceClients, AJobAndHttpRequestsBatchInOneStep) {
  const auto service = make_stories260k_service();
  const auto prompts = std::vector<std::vector<int32_t>>{stories260k_encode("Once upon a time"),
                                                         stories260k_encode("The little dog"),
                                                         stories260k_encode("A girl named Lily")};
  const SamplingParams job_params{.max_tokens = 24, .ignore_eos = true};
  const SamplingParams http_params{.max_tokens = 48, .ignore_eos = true};
  const auto alone = tokens_alone(prompts, {job_params, http_params, http_params});

  // A request of a third client paces the service: its turnstile stops the service's thread
  // while the job and then the HTTP request submit.
  const auto turnstile = std::make_shared<EventTurnstile>();
  auto pacer = service->submit({stories260k_encode("Tom had a ball"),
                                SamplingParams{.max_tokens = 400, .ignore_eos = true}, 99},
                               EventTurnstile::on_event(turnstile));
  ASSERT_TRUE(turnstile->wait_for_event());

  std::mutex job_mutex;
  std::condition_variable job_called;
  StepStats job_last_step;
  int job_num_callbacks = 0;
  auto job = service->submit({prompts[0], job_params, 0, /*stream_tokens=*/false}, [&] {
    // On the service's thread, right after the job's result: the latest step is its last one.
    const ServiceMetrics metrics = service->metrics();
    {
      const std::lock_guard lock(job_mutex);
      job_last_step = metrics.latest_step;
      ++job_num_callbacks;
    }
    job_called.notify_all();
  });
  const OpenOnExit open_on_exit(turnstile);
  // Eight steps on, the job is generating (its first of 24 tokens came a step after it arrived).
  for (int event = 1; event <= 8; ++event) {
    turnstile->pass();
    ASSERT_TRUE(turnstile->wait_for_event());
  }
  EXPECT_EQ(service->metrics().num_running, 2) << "the job did not start beside the pacer";
  std::vector<std::unique_ptr<RequestHandle>> http;
  for (size_t i = 1; i < prompts.size(); ++i)
    http.push_back(service->submit({prompts[i], http_params, i}));
  pacer->abort();  // it leaves as the HTTP request comes
  turnstile->open();

  const EndedStream job_stream = read_to_end(job->stream());
  ASSERT_TRUE(job_stream.has_ended);
  EXPECT_TRUE(job_stream.tokens.empty()) << "a client that asked for results only got tokens";
  ASSERT_EQ(job_stream.finished.size(), 1u);
  EXPECT_EQ(job_stream.finished[0].finish_reason, FinishReason::Length);
  EXPECT_EQ(job_stream.finished[0].output_token_ids, alone[0]);
  {
    // The callback runs after the result is pushed (the stream may hand it over first).
    std::unique_lock lock(job_mutex);
    ASSERT_TRUE(
        job_called.wait_for(lock, std::chrono::seconds(60), [&] { return job_num_callbacks > 0; }));
    EXPECT_EQ(job_num_callbacks, 1);
    // The job's last step (its 24th token) ran the two HTTP prompts beside it.
    EXPECT_EQ(job_last_step.num_scheduled_requests, 3);
    EXPECT_EQ(job_last_step.num_running, 2);  // counted after it: the HTTP prompts run on
  }
  for (size_t i = 0; i < http.size(); ++i) {
    const EndedStream stream = read_to_end(http[i]->stream());
    ASSERT_TRUE(stream.has_ended);
    ASSERT_EQ(stream.finished.size(), 1u);
    EXPECT_EQ(stream.finished[0].finish_reason, FinishReason::Length);
    EXPECT_EQ(stream.finished[0].output_token_ids, alone[i + 1]) << "HTTP prompt " << i;
    EXPECT_EQ(ids_of(stream.tokens), alone[i + 1]) << "HTTP prompt " << i << "'s token events";
  }
  EXPECT_EQ(read_to_end(pacer->stream()).finished.at(0).finish_reason, FinishReason::Abort);
}

// Many clients submit at once while the queue has room for two: exactly two get in, whatever
// the interleaving, and requests waiting in the engine (not only in the service's own queue)
// count. The service's thread stands still meanwhile, so the room cannot change under the race.
// A cap checked apart from the push (two submits both seeing room), one that forgot the engine's
// waiting list (four would get in), or a refused submit that still counted, fails here.
TEST(EngineServiceRaces, SubmitsRacingTheQueueCapAdmitExactlyTheRoom) {
  const auto service = make_stories260k_service(
      ServiceConfig{.engine = EngineConfig{.max_num_seqs = 1}, .max_num_waiting = 4});
  const SamplingParams short_params{.max_tokens = 4, .ignore_eos = true};
  const auto turnstile = std::make_shared<EventTurnstile>();
  auto holder = service->submit({stories260k_encode("Once upon a time"),
                                 SamplingParams{.max_tokens = 400, .ignore_eos = true}, 0},
                                EventTurnstile::on_event(turnstile));
  ASSERT_TRUE(turnstile->wait_for_event());
  std::vector<std::unique_ptr<RequestHandle>> admitted;
  admitted.push_back(service->submit({stories260k_encode("a"), short_params, 1}));
  admitted.push_back(service->submit({stories260k_encode("b"), short_params, 2}));
  std::mutex admitted_mutex;
  const OpenOnExit open_on_exit(turnstile);
  // One more step: the two are in the engine's waiting list (one request runs at a time).
  turnstile->pass();
  ASSERT_TRUE(turnstile->wait_for_event());
  ServiceMetrics metrics = service->metrics();
  ASSERT_EQ(metrics.num_running, 1);
  ASSERT_EQ(metrics.num_waiting, 2);

  constexpr int kNumClients = 8;
  constexpr int kSubmitsPerClient = 4;
  std::latch start(kNumClients);
  std::atomic<int> num_refused{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kNumClients; ++c) {
    clients.emplace_back([&, c] {
      start.arrive_and_wait();
      for (int k = 0; k < kSubmitsPerClient; ++k) {
        try {
          auto handle = service->submit(
              {stories260k_encode("c"), short_params, static_cast<uint64_t>(10 + c * 10 + k)});
          const std::lock_guard lock(admitted_mutex);
          admitted.push_back(std::move(handle));
        } catch (const QueueFull&) {
          ++num_refused;
        }
      }
    });
  }
  for (auto& client : clients) client.join();
  EXPECT_EQ(admitted.size(), 4u);  // the two from before and two of the race
  EXPECT_EQ(num_refused.load(), kNumClients * kSubmitsPerClient - 2);
  metrics = service->metrics();
  EXPECT_EQ(metrics.num_waiting, 4);
  EXPECT_THROW(service->submit({stories260k_encode("d"), short_params, 5}), QueueFull);

  // Every admitted request runs once the holder is gone.
  holder->abort();
  turnstile->open();
  for (auto& handle : admitted) {
    const EndedStream stream = read_to_end(handle->stream());
    ASSERT_TRUE(stream.has_ended);
    ASSERT_EQ(stream.finished.size(), 1u);
    EXPECT_EQ(stream.finished[0].finish_reason, FinishReason::Length);
    EXPECT_EQ(stream.finished[0].output_token_ids.size(), 4u);
  }
  metrics = service->metrics();
  EXPECT_EQ(metrics.num_requests_finished, 5);
  EXPECT_EQ(metrics.num_requests_aborted, 1);
  EXPECT_EQ(metrics.num_waiting, 0);
  auto after = service->submit({stories260k_encode("e"), short_params, 6});
  EXPECT_EQ(read_to_end(after->stream()).finished.at(0).finish_reason, FinishReason::Length);
}

// Where the client's abort lands in the last moments of a request of kNumTokens tokens.
enum class AbortPoint {
  BeforeTheLastStep,  // at token kNumTokens - 1: it reaches the engine before the last token
  AtTheLastToken,     // at the last token's event: the engine has finished the request, the
                      // service has not yet pushed its result
  AtTheResult,        // at the result's event: pushed, not yet taken by the client
};

class AbortRacingAFinish : public ::testing::TestWithParam<AbortPoint> {};

// An abort that races the finish ends the stream exactly once: with Abort when it reached the
// engine first, else with the finish (Length) and every token, and the abort is then a no-op.
// The metrics count it once, as what it ended as. A service that pushed a second result for an
// abort that came late (an abort sent to a request the engine already finished, or a stream
// ended again by the service), or counted the request twice, fails here; in a release build the
// stream's own assertion against a second result is compiled out, so the test counts events.
TEST_P(AbortRacingAFinish, EndsTheStreamOnce) {
  constexpr int kNumTokens = 6;
  const AbortPoint point = GetParam();
  const int stop_at = point == AbortPoint::BeforeTheLastStep ? kNumTokens - 1
                      : point == AbortPoint::AtTheLastToken  ? kNumTokens
                                                             : kNumTokens + 1;
  const auto service = make_stories260k_service();
  const auto turnstile = std::make_shared<EventTurnstile>();
  auto handle = service->submit({stories260k_encode("Once upon a time"),
                                 SamplingParams{.max_tokens = kNumTokens, .ignore_eos = true}, 0},
                                EventTurnstile::on_event(turnstile));
  const OpenOnExit open_on_exit(turnstile);
  for (int event = 1; event < stop_at; ++event) {
    ASSERT_TRUE(turnstile->wait_for_event());
    turnstile->pass();
  }
  ASSERT_TRUE(turnstile->wait_for_event());
  EXPECT_EQ(turnstile->num_events(), stop_at);
  EXPECT_EQ(handle->stream().is_finished(), point == AbortPoint::AtTheResult);
  handle->abort();
  turnstile->open();

  const EndedStream stream = read_to_end(handle->stream());
  ASSERT_TRUE(stream.has_ended);
  ASSERT_EQ(stream.finished.size(), 1u);
  const FinishedRequest& result = stream.finished[0];
  const bool abort_wins = point == AbortPoint::BeforeTheLastStep;
  EXPECT_EQ(result.finish_reason, abort_wins ? FinishReason::Abort : FinishReason::Length);
  const size_t num_tokens = abort_wins ? kNumTokens - 1 : kNumTokens;
  EXPECT_EQ(result.output_token_ids.size(), num_tokens);
  EXPECT_EQ(stream.tokens.size(), num_tokens);

  // The service goes on; once a later request ran, the loop has passed the aborted one by: had
  // it pushed anything more to its stream, it would be there now.
  auto later = service->submit({stories260k_encode("The cat"), SamplingParams{.max_tokens = 3}, 1});
  EXPECT_EQ(read_to_end(later->stream()).finished.size(), 1u);
  EXPECT_TRUE(handle->stream().take_all().empty());
  const ServiceMetrics metrics = service->metrics();
  EXPECT_EQ(metrics.num_requests_finished, 2);
  EXPECT_EQ(metrics.num_requests_aborted, abort_wins ? 1 : 0);
  EXPECT_EQ(metrics.num_kv_blocks_used, 0);
}

INSTANTIATE_TEST_SUITE_P(EngineServiceRaces, AbortRacingAFinish,
                         ::testing::Values(AbortPoint::BeforeTheLastStep,
                                           AbortPoint::AtTheLastToken, AbortPoint::AtTheResult),
                         [](const auto& param_info) {
                           switch (param_info.param) {
                             case AbortPoint::BeforeTheLastStep:
                               return "BeforeTheLastStep";
                             case AbortPoint::AtTheLastToken:
                               return "AtTheLastToken";
                             case AbortPoint::AtTheResult:
                               return "AtTheResult";
                           }
                           return "";
                         });

// Two requests outgrow a pool of 8 blocks; the newer is preempted (its blocks freed, back in the
// waiting list) and its client disconnects right then, before the engine could take it up again.
// Its abort must reach a request that is waiting, not running: it ends as aborted, is never
// recomputed, and holds nothing; the other request runs on to the tokens it gets alone. An abort
// that only looked at running requests (the preempted one would be recomputed and run to its end
// for nobody), or blocks kept by the preempted request, fails here.
TEST(EngineServiceRaces, AClientThatDisconnectsWhileItsRequestIsPreemptedHoldsNothing) {
  const auto service = make_stories260k_service(
      ServiceConfig{.engine = EngineConfig{.block_size = 16, .num_kv_blocks = 8}});
  const SamplingParams params{.max_tokens = 100, .ignore_eos = true};
  const std::vector<int32_t> kept_prompt = stories260k_encode("Once upon a time");
  const auto alone = tokens_alone({kept_prompt}, {params});

  const auto turnstile = std::make_shared<EventTurnstile>();
  auto kept = service->submit({kept_prompt, params, 0}, EventTurnstile::on_event(turnstile));
  ASSERT_TRUE(turnstile->wait_for_event());
  auto leaving = service->submit({stories260k_encode("The cat sat on the mat"), params, 1});
  const OpenOnExit open_on_exit(turnstile);
  // Step by step until a step preempts: both grow a block every 16 tokens, and 8 blocks hold
  // 128 tokens, so it comes long before the kept request's 100th token.
  bool is_preempted = false;
  for (int event = 1; event < 100 && !is_preempted; ++event) {
    turnstile->pass();
    ASSERT_TRUE(turnstile->wait_for_event());
    is_preempted = service->metrics().num_preemptions > 0;
  }
  ASSERT_TRUE(is_preempted) << "no step preempted";
  const ServiceMetrics at_preemption = service->metrics();
  EXPECT_EQ(at_preemption.num_preemptions, 1);
  EXPECT_EQ(at_preemption.num_running, 1);
  EXPECT_EQ(at_preemption.num_waiting, 1);  // the leaving request, preempted
  EXPECT_FALSE(leaving->stream().take_all().empty()) << "it had generated before";
  EXPECT_FALSE(leaving->stream().is_finished());
  leaving.reset();  // the client disconnects: its handle goes, which aborts the request
  turnstile->open();

  const EndedStream stream = read_to_end(kept->stream());
  ASSERT_TRUE(stream.has_ended);
  ASSERT_EQ(stream.finished.size(), 1u);
  EXPECT_EQ(stream.finished[0].finish_reason, FinishReason::Length);
  EXPECT_EQ(stream.finished[0].output_token_ids, alone[0]);
  EXPECT_EQ(stream.finished[0].num_preemptions, 0);
  const ServiceMetrics metrics = service->metrics();
  EXPECT_EQ(metrics.num_requests_finished, 2);
  EXPECT_EQ(metrics.num_requests_aborted, 1);
  EXPECT_EQ(metrics.num_preemptions, 1) << "the aborted request was taken up again";
  EXPECT_EQ(metrics.num_running, 0);
  EXPECT_EQ(metrics.num_waiting, 0);
  EXPECT_EQ(metrics.num_kv_blocks_used, 0);
}

}  // namespace
}  // namespace sluice::test
