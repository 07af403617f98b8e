// Engine behaviour beyond batch invariance: aborts, rejections, stop conditions and statistics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "engine/core/error.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

TEST(EngineBehaviour, AbortFinishesEverySampleOfTheGroupWithAbort) {
  StoriesModel model;
  auto engine = model.make_engine(EngineConfig{.check_invariants = true});
  SamplingParams params{.n = 3, .temperature = 1.0f, .max_tokens = 200};
  const RequestId kept = engine->add_request(model.encode("Once upon a time"), params, 0);
  const RequestId aborted = engine->add_request(model.encode("The dog"), params, 1);
  for (int i = 0; i < 5; ++i) engine->step();  // past the fork: three samples each
  engine->abort(aborted);
  std::map<RequestId, std::vector<FinishReason>> reasons;
  while (engine->has_unfinished()) {
    for (const auto& f : engine->step().finished) reasons[f.group_id].push_back(f.finish_reason);
  }
  EXPECT_EQ(reasons[aborted], std::vector<FinishReason>(3, FinishReason::Abort));
  ASSERT_EQ(reasons[kept].size(), 3u);
  for (const auto r : reasons[kept]) EXPECT_NE(r, FinishReason::Abort);
  EXPECT_EQ(engine->kv_cache_manager().num_used_blocks(), 0);
}

// A prompt that ends before its samples fork reports all n of them, or a client waiting for n
// results (a server's stream, a job's row) would wait forever.
TEST(EngineBehaviour, AGroupEndedBeforeItsForkReportsEverySample) {
  StoriesModel model;
  auto engine = model.make_engine(EngineConfig{.max_model_len = 16, .check_invariants = true});
  SamplingParams params{.n = 3, .temperature = 1.0f, .max_tokens = 4};
  const RequestId aborted = engine->add_request(model.encode("The dog"), params, 0);
  const RequestId too_long = engine->add_request(std::vector<int32_t>(20, 300), params, 1);
  const RequestId ran = engine->add_request(model.encode("Once"), params, 2);
  engine->abort(aborted);  // still waiting: never scheduled
  std::map<RequestId, std::vector<FinishedRequest>> done;
  while (engine->has_unfinished()) {
    for (auto& f : engine->step().finished) done[f.group_id].push_back(std::move(f));
  }
  for (const RequestId group : {aborted, too_long, ran}) {
    ASSERT_EQ(done[group].size(), 3u) << group;
    std::set<uint32_t> samples;
    for (const auto& f : done[group]) samples.insert(f.sample_idx);
    EXPECT_EQ(samples, (std::set<uint32_t>{0, 1, 2})) << group;
  }
  std::set<RequestId> request_ids;
  for (const auto& [group, finished] : done) {
    for (const auto& f : finished) request_ids.insert(f.request_id);
  }
  EXPECT_EQ(request_ids.size(), 9u);
  for (const auto& f : done[aborted]) {
    EXPECT_EQ(f.finish_reason, FinishReason::Abort);
    EXPECT_TRUE(f.output_token_ids.empty());
  }
  for (const auto& f : done[too_long]) {
    EXPECT_EQ(f.finish_reason, FinishReason::Error);
    EXPECT_THAT(f.error, HasSubstr("16"));
  }
  for (const auto& f : done[ran]) EXPECT_EQ(f.finish_reason, FinishReason::Length);
  EXPECT_EQ(engine->kv_cache_manager().num_used_blocks(), 0);
}

// Log-probabilities come with every token of a request that asks, from the raw distribution:
// a top-1 sampler at temperature 2 draws greedy's tokens and reports greedy's numbers.
TEST(EngineBehaviour, LogprobsAreTheRawDistributionsWhateverTheSampler) {
  StoriesModel model;
  auto engine = model.make_engine(EngineConfig{.check_invariants = true});
  const auto prompt = model.encode("Once upon a time");
  const RequestId greedy =
      engine->add_request(prompt, SamplingParams{.max_tokens = 12, .logprobs = 3}, 0);
  const RequestId top1 = engine->add_request(
      prompt, SamplingParams{.temperature = 2.0f, .top_k = 1, .max_tokens = 12, .logprobs = 3}, 0);
  const RequestId plain = engine->add_request(prompt, SamplingParams{.max_tokens = 12}, 0);
  const RequestId forked = engine->add_request(
      prompt, SamplingParams{.n = 2, .temperature = 1.0f, .max_tokens = 6, .logprobs = 0}, 5);
  std::map<RequestId, std::vector<TokenLogprobs>> streamed;
  std::map<RequestId, FinishedRequest> done;
  while (engine->has_unfinished()) {
    auto step = engine->step();
    for (auto& d : step.new_tokens) {
      if (d.token_id < 0) continue;
      EXPECT_EQ(d.logprobs.has_value(), d.group_id != plain);
      if (d.logprobs) streamed[d.request_id].push_back(*d.logprobs);
    }
    for (auto& f : step.finished) done[f.request_id] = std::move(f);
  }
  const FinishedRequest& g = done.at(greedy);
  ASSERT_EQ(g.output_logprobs.size(), g.output_token_ids.size());
  EXPECT_EQ(streamed[greedy], g.output_logprobs);
  for (size_t i = 0; i < g.output_token_ids.size(); ++i) {
    const TokenLogprobs& lp = g.output_logprobs[i];
    ASSERT_EQ(lp.top.size(), 3u);
    EXPECT_EQ(lp.top[0].first, g.output_token_ids[i]);  // greedy takes the likeliest
    EXPECT_EQ(lp.top[0].second, lp.logprob);
    EXPECT_LE(lp.logprob, 0.0f);
    EXPECT_GE(lp.top[0].second, lp.top[1].second);
    EXPECT_LE(std::exp(lp.top[0].second) + std::exp(lp.top[1].second) + std::exp(lp.top[2].second),
              1.0f + 1e-5f);
  }
  EXPECT_EQ(done.at(top1).output_token_ids, g.output_token_ids);
  EXPECT_EQ(done.at(top1).output_logprobs, g.output_logprobs);
  EXPECT_TRUE(done.at(plain).output_logprobs.empty());
  int num_forked = 0;
  for (const auto& [id, f] : done) {
    if (f.group_id != forked) continue;
    ++num_forked;
    ASSERT_EQ(f.output_logprobs.size(), f.output_token_ids.size());
    for (const auto& lp : f.output_logprobs) EXPECT_TRUE(lp.top.empty());
  }
  EXPECT_EQ(num_forked, 2);
}

TEST(EngineBehaviour, InvalidSamplingParametersThrowAtAdd) {
  StoriesModel model;
  auto engine = model.make_engine(EngineConfig{.num_kv_blocks = 8});
  EXPECT_THROW(engine->add_request({1, 2}, SamplingParams{.temperature = -1.0f}, 0), Error);
  EXPECT_THROW(engine->add_request({1, 99999}, SamplingParams{}, 0), Error);
  EXPECT_THROW(engine->add_request({1, 2}, SamplingParams{.logprobs = 21}, 0), Error);
  EXPECT_THROW(engine->add_request({1, 2}, SamplingParams{.logprobs = -2}, 0), Error);
  EXPECT_FALSE(engine->has_unfinished());
}

TEST(EngineBehaviour, PromptAtTheContextLimitFailsAloneWithAClearError) {
  StoriesModel model;
  auto engine = model.make_engine(EngineConfig{.max_model_len = 16, .check_invariants = true});
  const RequestId ok =
      engine->add_request(model.encode("Once"), SamplingParams{.max_tokens = 4}, 0);
  const RequestId too_long =
      engine->add_request(std::vector<int32_t>(20, 300), SamplingParams{}, 1);
  std::map<RequestId, FinishedRequest> done;
  while (engine->has_unfinished()) {
    for (auto& f : engine->step().finished) done[f.group_id] = std::move(f);
  }
  EXPECT_EQ(done.at(ok).finish_reason, FinishReason::Length);
  EXPECT_EQ(done.at(too_long).finish_reason, FinishReason::Error);
  EXPECT_THAT(done.at(too_long).error, HasSubstr("16"));
}

// llama2.c models end on a generated BOS, as run.c does; sampling long enough produces one.
TEST(EngineBehaviour, Llama2cModelsStopOnAGeneratedBos) {
  StoriesModel model("models/stories260K/llama2c/stories260K.bin");
  auto engine = model.make_engine(EngineConfig{.check_invariants = true});
  std::vector<std::vector<int32_t>> prompts(16, model.encode("Once upon a time"));
  const auto out =
      run_all(*engine, prompts, SamplingParams{.temperature = 1.0f, .seed = 3, .max_tokens = 400});
  int num_stopped = 0;
  for (const auto& [key, f] : out) {
    if (f.finish_reason != FinishReason::Stop) continue;
    ++num_stopped;
    EXPECT_EQ(f.output_token_ids.back(), 1);  // the BOS that ended it, not decoded into the text
    EXPECT_LT(f.output_token_ids.size(), 400u);
  }
  EXPECT_GT(num_stopped, 0);
}

TEST(EngineBehaviour, StatsAccountForTokensAndBlocks) {
  StoriesModel model;
  auto engine = model.make_engine(EngineConfig{.max_num_seqs = 4, .check_invariants = true});
  std::vector<std::vector<int32_t>> prompts;
  int64_t prompt_tokens = 0;
  for (const auto& text : alpaca_prompts(10)) {
    prompts.push_back(model.encode(text));
    prompt_tokens += static_cast<int64_t>(prompts.back().size());
  }
  for (size_t i = 0; i < prompts.size(); ++i)
    engine->add_request(prompts[i], SamplingParams{.max_tokens = 12}, i);
  StepStats last;
  while (engine->has_unfinished()) {
    last = engine->step().stats;
    EXPECT_LE(last.num_scheduled_requests, 4);
    EXPECT_EQ(last.num_kv_blocks_used + last.num_kv_blocks_free, last.num_kv_blocks);
    EXPECT_LE(last.num_kv_tokens, static_cast<int64_t>(last.num_kv_blocks_used) * 16);
  }
  EXPECT_EQ(last.total_generation_tokens, 10 * 12);
  EXPECT_EQ(last.total_prompt_tokens, prompt_tokens);  // no preemption: each prompt once
  EXPECT_EQ(last.num_finished, 10);
  EXPECT_EQ(last.num_kv_blocks_used, 0);
  EXPECT_GT(last.generation_tokens_per_s, 0.0);
  EXPECT_GT(last.memory.kv_cache_bytes, 0u);
}

}  // namespace
}  // namespace sluice::test
