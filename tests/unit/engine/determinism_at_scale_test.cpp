// The CPU backend's promise at the scale of a real file: 300 Alpaca rows give the same token ids
// whether requests run one at a time, seven or 256 at once, in a pool so small that requests
// are preempted and recomputed, or with prefill chunked at a tiny token budget (greedy, and
// seeded sampling with two samples a row). Each row run alone is the reference; a row that
// differs anywhere is named. A mixture-of-experts model (tiny-arch qwen3moe, Q8_0) keeps the
// promise too: which experts a token's neighbours in the step chose does not change its result,
// and so does a hybrid model (tiny-arch qwen35, a recurrent state slot per sequence).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

constexpr size_t kNumScaleRows = 300;

struct Schedule {
  std::string name;
  EngineConfig config;
};

std::vector<Schedule> schedules() {
  return {
      {"max_num_seqs 7", EngineConfig{.max_num_seqs = 7}},
      {"max_num_seqs 256", EngineConfig{.max_num_seqs = 256}},
      {"a 24-block pool (preemption)", EngineConfig{.num_kv_blocks = 24}},
      {"chunked prefill, 13 tokens a step",
       EngineConfig{.max_num_seqs = 32, .max_num_batched_tokens = 13}},
  };
}

void expect_every_schedule_equal(const SamplingParams& params, const StoriesModel& model,
                                 size_t num_rows) {
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& text : alpaca_prompts(num_rows)) prompts.push_back(model.encode(text));
  ASSERT_EQ(prompts.size(), num_rows);

  auto alone_engine = model.make_engine(EngineConfig{.max_num_seqs = 1});
  const auto alone = run_all(*alone_engine, prompts, params);
  ASSERT_EQ(alone.size(), num_rows * params.n);
  size_t num_generated = 0;  // rows that produced tokens (a prompt past the context produces none)
  for (const auto& [key, f] : alone) num_generated += f.output_token_ids.empty() ? 0 : 1;
  EXPECT_GT(num_generated, alone.size() * 9 / 10);
  for (const Schedule& schedule : schedules()) {
    auto engine = model.make_engine(schedule.config);
    RunStats stats;
    const auto batch = run_all(*engine, prompts, params, &stats);
    ASSERT_EQ(batch.size(), alone.size()) << schedule.name;
    int num_differ = 0;
    for (const auto& [key, f] : alone) {
      if (batch.at(key).output_token_ids == f.output_token_ids) continue;
      if (++num_differ <= 5)
        ADD_FAILURE() << schedule.name << ": row " << key.first << " sample " << key.second
                      << " differs from the row run alone";
    }
    EXPECT_EQ(num_differ, 0) << schedule.name << ": " << num_differ << " of " << alone.size()
                             << " outputs differ";
    if (schedule.config.num_kv_blocks > 0) {
      EXPECT_GT(stats.num_preemptions, 0) << schedule.name;
    }
    EXPECT_LE(stats.max_scheduled_tokens, engine->config().max_num_batched_tokens) << schedule.name;
  }
}

TEST(DeterminismAtScale, GreedyRowsAreTheSameUnderEverySchedule) {
  expect_every_schedule_equal(SamplingParams{.max_tokens = 48}, StoriesModel(), kNumScaleRows);
}

TEST(DeterminismAtScale, SeededSamplesAreTheSameUnderEverySchedule) {
  expect_every_schedule_equal(
      SamplingParams{
          .n = 2, .temperature = 0.9f, .top_k = 40, .top_p = 0.95f, .seed = 77, .max_tokens = 48},
      StoriesModel(), kNumScaleRows);
}

TEST(DeterminismAtScale, MixtureOfExpertsRowsAreTheSameUnderEverySchedule) {
  const StoriesModel moe("models/tiny-arch/qwen3moe/gguf/qwen3moe-Q8_0.gguf");
  ASSERT_TRUE(moe.session.model->config.is_moe());
  expect_every_schedule_equal(SamplingParams{.max_tokens = 32}, moe, 120);
}

// A hybrid model (tiny-arch qwen35: Gated DeltaNet layers with a state slot per sequence beside
// one attention layer): a row's state does not depend on its neighbours, its chunks or its
// preemption either (prefix hits: hybrid_engine_test).
TEST(DeterminismAtScale, HybridRowsAreTheSameUnderEverySchedule) {
  const StoriesModel hybrid("models/tiny-arch/qwen35/gguf/qwen35-F32.gguf");
  ASSERT_TRUE(hybrid.session.model->config.is_hybrid());
  expect_every_schedule_equal(SamplingParams{.max_tokens = 32}, hybrid, 120);
}

}  // namespace
}  // namespace sluice::test
