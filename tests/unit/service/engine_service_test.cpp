// The engine service on stories260K: clients on several threads share one engine and get exactly
// the tokens they get alone; abort frees blocks; the queue is bounded; shutdown with requests in
// flight wakes every client; the metrics add up.
#include "engine/service/engine_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "engine/backend/cpu/cpu_backend.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

using namespace std::chrono_literals;

std::shared_ptr<const ModelSession> stories_session() {
  static const auto session = std::make_shared<const ModelSession>(
      open_model_session(shared_path("models/stories260K/gguf/stories260K-f32.gguf"), ""));
  return session;
}

std::unique_ptr<EngineService> make_service(const ServiceConfig& config = {}) {
  const auto session = stories_session();
  return std::make_unique<EngineService>(
      session, std::make_unique<CpuBackend>(*session->model, CpuBackendOptions{.num_threads = 2}),
      config);
}

std::vector<int32_t> encode(const std::string& text) {
  const Tokenizer& tokenizer = *stories_session()->tokenizer;
  return tokenizer.encode(text, EncodeOptions{.add_bos = tokenizer.add_bos_default()});
}

// Waits for every event of the stream; returns the finished samples by index.
std::vector<FinishedRequest> wait_finished(RequestHandle& handle, std::string* text = nullptr) {
  std::vector<FinishedRequest> out(handle.stream().num_samples());
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (auto event = handle.stream().pop(deadline)) {
    if (event->is_finished) {
      out[event->finished.sample_idx] = std::move(event->finished);
    } else if (text && event->token.sample_idx == 0) {
      *text += event->token.text;
    }
  }
  EXPECT_TRUE(handle.stream().is_drained()) << "the stream did not end within a minute";
  return out;
}

// Token ids of each prompt's samples, run on a plain engine one request at a time.
std::map<std::pair<size_t, uint32_t>, std::vector<int32_t>> alone_outputs(
    const std::vector<std::vector<int32_t>>& prompts, const SamplingParams& params) {
  const StoriesModel model;
  auto engine = model.make_engine(EngineConfig{.max_num_seqs = 1});
  std::map<std::pair<size_t, uint32_t>, std::vector<int32_t>> out;
  for (auto& [key, f] : run_all(*engine, prompts, params)) out[key] = f.output_token_ids;
  return out;
}

class SharedEngine : public ::testing::TestWithParam<SamplingParams> {};

TEST_P(SharedEngine, TwoClientsAtOnceGetTheTokensTheyGetAlone) {
  const SamplingParams params = GetParam();
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& text : alpaca_prompts(12)) prompts.push_back(encode(text));
  const auto alone = alone_outputs(prompts, params);

  const auto service = make_service();
  std::map<std::pair<size_t, uint32_t>, std::vector<int32_t>> shared;
  std::mutex shared_mutex;
  auto client = [&](size_t first) {
    std::vector<std::unique_ptr<RequestHandle>> handles;
    for (size_t i = first; i < prompts.size(); i += 2)
      handles.push_back(service->submit({prompts[i], params, i}));
    for (size_t k = 0; k < handles.size(); ++k) {
      std::string text;
      const auto samples = wait_finished(*handles[k], &text);
      const std::lock_guard lock(shared_mutex);
      for (const auto& f : samples) {
        shared[{first + 2 * k, f.sample_idx}] = f.output_token_ids;
        if (f.sample_idx == 0) {
          EXPECT_EQ(text, f.output_text) << "streamed text of prompt " << first + 2 * k;
        }
      }
    }
  };
  std::thread a(client, 0);
  std::thread b(client, 1);
  a.join();
  b.join();
  ASSERT_EQ(shared.size(), alone.size());
  for (const auto& [key, tokens] : alone) {
    EXPECT_EQ(shared.at(key), tokens) << "prompt " << key.first << " sample " << key.second;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sampling, SharedEngine,
    ::testing::Values(SamplingParams{.max_tokens = 40},
                      SamplingParams{
                          .n = 2, .temperature = 0.9f, .top_p = 0.9f, .seed = 7, .max_tokens = 40}),
    [](const auto& param_info) {
      return param_info.param.temperature == 0.0f ? "Greedy" : "Seeded";
    });

TEST(EngineService, AbortFreesTheRequestsBlocks) {
  const auto service = make_service();
  const SamplingParams params{.max_tokens = 400, .ignore_eos = true};
  auto handle = service->submit({encode("Once upon a time"), params, 0});
  auto dropped = service->submit({encode("The cat sat"), params, 1});
  // Both are generating once the first token arrives.
  const auto first = handle->stream().pop(std::chrono::steady_clock::now() + 60s);
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(first->is_finished);
  EXPECT_GT(service->metrics().num_kv_blocks_used, 0);
  handle->abort();
  dropped.reset();  // destroying a handle aborts its request too
  const auto samples = wait_finished(*handle);
  EXPECT_EQ(samples[0].finish_reason, FinishReason::Abort);
  EXPECT_LT(samples[0].output_token_ids.size(), 400u);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  // Blocks are freed when the abort reaches the engine; it reports the request a step later.
  while (
      (service->metrics().num_kv_blocks_used != 0 || service->metrics().num_requests_aborted < 2) &&
      std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  const ServiceMetrics metrics = service->metrics();
  EXPECT_EQ(metrics.num_kv_blocks_used, 0);
  EXPECT_EQ(metrics.num_requests_aborted, 2);
  EXPECT_EQ(metrics.num_running, 0);
  EXPECT_EQ(metrics.num_waiting, 0);
}

// The block map read once every request has finished is the pool as the run left it (no block
// owned), not the map of a step from the middle of the run: the GUI's last picture of a job.
TEST(EngineService, TheBlockMapAfterTheLastRequestEndsOwnsNoBlock) {
  const auto service = make_service();
  std::vector<std::unique_ptr<RequestHandle>> handles;
  for (size_t i = 0; i < 3; ++i) {
    handles.push_back(service->submit(
        {encode(alpaca_prompts(3)[i]), SamplingParams{.max_tokens = 24, .ignore_eos = true}, i}));
  }
  const auto first = handles[0]->stream().pop(std::chrono::steady_clock::now() + 60s);
  ASSERT_TRUE(first.has_value());
  // A client reads the map mid-run, as the GUI does on its timer: the next step publishes one
  // with the running requests' blocks.
  (void)service->kv_block_map();
  for (auto& handle : handles) wait_finished(*handle);
  const KvBlockMap map = service->kv_block_map();
  ASSERT_FALSE(map.states.empty());
  int num_held = 0;
  for (size_t b = 0; b < map.states.size(); ++b) {
    num_held += map.states[b] == KvBlockState::Owned || map.states[b] == KvBlockState::Shared;
    EXPECT_EQ(map.owner_rows[b], -1) << "block " << b;
  }
  EXPECT_EQ(num_held, 0) << "blocks still shown as held after every request ended";
}

TEST(EngineService, SubmitPastTheQueueCapThrowsQueueFull) {
  const auto service =
      make_service(ServiceConfig{.engine = EngineConfig{.max_num_seqs = 1}, .max_num_waiting = 2});
  const SamplingParams params{.max_tokens = 400, .ignore_eos = true};
  auto running = service->submit({encode("Once upon a time"), params, 0});
  ASSERT_TRUE(running->stream().pop(std::chrono::steady_clock::now() + 60s).has_value());
  // One request runs (max_num_seqs 1); two may wait; the next is refused.
  auto waiting_a = service->submit({encode("a"), params, 1});
  auto waiting_b = service->submit({encode("b"), params, 2});
  EXPECT_THROW(service->submit({encode("c"), params, 3}), QueueFull);
  // Room again once a waiting request is gone.
  waiting_a->abort();
  wait_finished(*waiting_a);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (service->metrics().num_waiting > 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  EXPECT_NO_THROW(service->submit({encode("d"), params, 4}));
}

TEST(EngineService, BadRequestsAreRefusedAndTheServiceGoesOn) {
  const auto service = make_service(ServiceConfig{.engine = EngineConfig{.max_model_len = 64}});
  EXPECT_THROW(service->submit({encode("x"), SamplingParams{.top_p = 2.0f}, 0}), Error);
  EXPECT_THROW(service->submit({{1, 100000}, SamplingParams{}, 0}), Error);
  // A prompt longer than the context is found by the engine: it finishes with an error.
  auto too_long = service->submit({std::vector<int32_t>(100, 5), SamplingParams{}, 0});
  const auto failed = wait_finished(*too_long);
  EXPECT_EQ(failed[0].finish_reason, FinishReason::Error);
  EXPECT_FALSE(failed[0].error.empty());
  auto fine = service->submit({encode("Once upon a time"), SamplingParams{.max_tokens = 8}, 0});
  EXPECT_EQ(wait_finished(*fine)[0].finish_reason, FinishReason::Length);
}

// A backend whose forward pass fails from the num_good-th call on, like a lost device.
class FailingBackend final : public Backend {
 public:
  FailingBackend(std::unique_ptr<Backend> backend, int num_good)
      : backend_(std::move(backend)), num_good_(num_good) {}
  std::string name() const override { return backend_->name(); }
  size_t kv_block_bytes(int block_size) const override {
    return backend_->kv_block_bytes(block_size);
  }
  void allocate_kv_cache(int num_blocks, int block_size) override {
    backend_->allocate_kv_cache(num_blocks, block_size);
  }
  void copy_blocks(std::span<const int32_t> src, std::span<const int32_t> dst) override {
    backend_->copy_blocks(src, dst);
  }
  void forward(const BatchInputs& inputs, std::vector<float>& logits) override {
    if (num_good_-- <= 0) throw Error("the device was lost");
    backend_->forward(inputs, logits);
  }
  BackendMemory memory() const override { return backend_->memory(); }

 private:
  std::unique_ptr<Backend> backend_;
  int num_good_;
};

TEST(EngineService, AFailedStepEndsItsRequestsWithTheErrorAndTheServiceStaysUp) {
  const auto session = stories_session();
  EngineService service(
      session,
      std::make_unique<FailingBackend>(
          std::make_unique<CpuBackend>(*session->model, CpuBackendOptions{.num_threads = 2}), 3),
      ServiceConfig{});
  auto handle =
      service.submit({encode("Once upon a time"), SamplingParams{.n = 2, .max_tokens = 50}, 0});
  for (const auto& f : wait_finished(*handle)) {
    EXPECT_EQ(f.finish_reason, FinishReason::Error);
    EXPECT_THAT(f.error, ::testing::HasSubstr("the device was lost"));
  }
  // Later requests are told the same, rather than hanging.
  auto later = service.submit({encode("The cat"), SamplingParams{.max_tokens = 5}, 1});
  const auto failed = wait_finished(*later);
  EXPECT_EQ(failed[0].finish_reason, FinishReason::Error);
  EXPECT_THAT(failed[0].error, ::testing::HasSubstr("the device was lost"));
}

TEST(EngineService, DestructionWithRequestsInFlightWakesEveryClient) {
  auto service = make_service(ServiceConfig{.engine = EngineConfig{.max_num_seqs = 2}});
  const SamplingParams params{.max_tokens = 500, .ignore_eos = true};
  std::vector<std::unique_ptr<RequestHandle>> handles;
  for (uint64_t i = 0; i < 6; ++i) handles.push_back(service->submit({encode("Once"), params, i}));
  std::atomic<int> num_ended{0};
  std::vector<std::thread> clients;
  for (auto& handle : handles) {
    clients.emplace_back([&handle, &num_ended] {
      const auto samples = wait_finished(*handle);
      if (samples[0].finish_reason == FinishReason::Abort) ++num_ended;
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (service->metrics().latest_step.step_index < 3 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  const ServiceMetrics metrics = service->metrics();
  EXPECT_GE(metrics.num_running, 1);  // mid-generation, with more waiting
  EXPECT_LE(metrics.num_running, 2);
  EXPECT_EQ(metrics.num_running + metrics.num_waiting, 6);
  service.reset();
  for (auto& client : clients) client.join();
  EXPECT_EQ(num_ended.load(), 6);
}

TEST(EngineService, MetricsAddUp) {
  const auto service = make_service();
  std::vector<std::unique_ptr<RequestHandle>> handles;
  int64_t num_prompt_tokens = 0;
  for (size_t i = 0; i < 5; ++i) {
    const auto prompt = encode(alpaca_prompts(5)[i]);
    num_prompt_tokens += static_cast<int64_t>(prompt.size());
    handles.push_back(service->submit(
        {prompt, SamplingParams{.n = i == 0 ? 2 : 1, .max_tokens = 12 + static_cast<int>(i)}, i}));
  }
  int64_t num_generation_tokens = 0;
  int64_t num_samples = 0;
  for (auto& handle : handles) {
    for (const auto& f : wait_finished(*handle)) {
      num_generation_tokens += static_cast<int64_t>(f.output_token_ids.size());
      ++num_samples;
    }
  }
  const ServiceMetrics m = service->metrics();
  EXPECT_EQ(m.num_requests_finished, 5);
  EXPECT_EQ(m.num_requests_aborted, 0);
  EXPECT_EQ(m.num_prompt_tokens, num_prompt_tokens);
  EXPECT_EQ(m.num_generation_tokens, num_generation_tokens);
  EXPECT_EQ(m.time_to_first_token.count, 5);  // one first token per request
  EXPECT_EQ(m.inter_token_latency.count, num_generation_tokens - num_samples);
  EXPECT_EQ(m.time_to_first_token.cumulative_count(m.time_to_first_token.upper_bounds_s.size()), 5);
  EXPECT_EQ(m.num_kv_blocks, m.latest_step.num_kv_blocks);
  EXPECT_GT(m.latest_step.step_index, 0);
  EXPECT_EQ(m.latest_step.total_generation_tokens, num_generation_tokens);
}

TEST(LatencyHistogram, BucketsAreCumulative) {
  LatencyHistogram h({0.1, 1.0});
  h.observe(0.05);
  h.observe(0.1);
  h.observe(0.5);
  h.observe(3.0);
  EXPECT_EQ(h.cumulative_count(0), 2);
  EXPECT_EQ(h.cumulative_count(1), 3);
  EXPECT_EQ(h.cumulative_count(2), 4);
  EXPECT_EQ(h.count, 4);
  EXPECT_DOUBLE_EQ(h.sum_s, 3.65);
}

}  // namespace
}  // namespace sluice::test
