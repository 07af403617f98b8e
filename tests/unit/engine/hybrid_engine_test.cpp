// A hybrid model through the whole engine on the CPU backend: tiny-arch qwen35 (3 Gated DeltaNet
// layers keeping a state slot per sequence, 1 gated attention layer over the KV cache), from its
// GGUF file and its HF folder. Every row's tokens must equal the row run alone with prefix
// caching off, whether rows run together, in 7-token chunks, in a pool small enough to preempt,
// with fewer state slots than rows, or starting from prefix checkpoints (prompts sharing a
// 48-token head: the 2nd saves the checkpoint, the 3rd onward start from it), greedy and with
// two seeded samples a row (forks copy the state).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

constexpr size_t kHybridMaxPromptTokens = 90;  // the model's context is 256

struct HybridCase {
  const char* name;
  const char* path;
};

void PrintTo(const HybridCase& c, std::ostream* os) {
  *os << c.name;
}

const HybridCase kHybridCases[] = {
    {"qwen35_gguf_F32", "models/tiny-arch/qwen35/gguf/qwen35-F32.gguf"},
    {"qwen35_hf", "models/tiny-arch/qwen35/hf"},
};

// 12 Alpaca rows, then 6 prompts sharing a 48-token head (3 blocks) with tails of their own.
std::vector<std::vector<int32_t>> hybrid_prompts(const StoriesModel& model) {
  std::vector<std::vector<int32_t>> prompts;
  const std::vector<std::string> texts = alpaca_prompts(18);
  for (size_t i = 0; i < 12; ++i) {
    std::vector<int32_t> ids = model.encode(texts[i]);
    ids.resize(std::min(ids.size(), kHybridMaxPromptTokens));
    prompts.push_back(std::move(ids));
  }
  std::vector<int32_t> head = model.encode(
      "You are a careful assistant. Answer every question in one short paragraph, plainly, "
      "without lists, and say so when you do not know. The question follows.");
  EXPECT_GE(head.size(), 48u);
  head.resize(48);
  for (size_t i = 12; i < 18; ++i) {
    std::vector<int32_t> ids = head;
    std::vector<int32_t> tail = model.encode(texts[i]);
    tail.erase(tail.begin());  // its BOS
    tail.resize(std::min<size_t>(tail.size(), 30));
    ids.insert(ids.end(), tail.begin(), tail.end());
    prompts.push_back(std::move(ids));
  }
  return prompts;
}

struct HybridSchedule {
  const char* name;
  EngineConfig config;
};

class HybridEngine : public ::testing::TestWithParam<HybridCase> {
 protected:
  void expect_every_schedule_equal(const SamplingParams& params) {
    const StoriesModel model(GetParam().path);
    ASSERT_TRUE(model.session.model->config.is_hybrid());
    const auto prompts = hybrid_prompts(model);
    auto alone_engine =
        model.make_engine(EngineConfig{.max_num_seqs = 1, .enable_prefix_caching = false});
    ASSERT_NE(alone_engine->state_pool(), nullptr);
    const auto alone = run_all(*alone_engine, prompts, params);
    ASSERT_EQ(alone.size(), prompts.size() * static_cast<size_t>(params.n));
    const HybridSchedule schedules[] = {
        {"together", {.max_num_seqs = 32, .enable_prefix_caching = false}},
        {"7-token chunks",
         {.max_num_seqs = 8, .max_num_batched_tokens = 7, .enable_prefix_caching = false}},
        {"a 12-block pool (preemption)",
         {.num_kv_blocks = 12, .max_num_seqs = 16, .enable_prefix_caching = false}},
        {"3 state slots", {.max_num_seqs = 16, .num_state_slots = 3}},
        {"prefix checkpoints, one at a time", {.max_num_seqs = 1}},
        {"prefix checkpoints, preemption, chunks",
         {.num_kv_blocks = 14,
          .max_num_seqs = 6,
          .max_num_batched_tokens = 24,
          .check_invariants = true,
          .num_state_slots = 6}},
    };
    for (const auto& [name, config] : schedules) {
      auto engine = model.make_engine(config);
      RunStats stats;
      const auto batch = run_all(*engine, prompts, params, &stats);
      ASSERT_EQ(batch.size(), alone.size()) << name;
      int num_differ = 0;
      for (const auto& [key, f] : alone) {
        EXPECT_EQ(batch.at(key).finish_reason, f.finish_reason) << name;
        if (batch.at(key).output_token_ids == f.output_token_ids) continue;
        if (++num_differ <= 3)
          ADD_FAILURE() << name << ": row " << key.first << " sample " << key.second
                        << " differs from the row run alone";
      }
      EXPECT_EQ(num_differ, 0) << GetParam().name << ", " << name;
      const StateCheckpointStats& checkpoints = engine->state_pool()->checkpoint_stats();
      if (config.num_kv_blocks > 0) {
        EXPECT_GT(stats.num_preemptions, 0) << name;
      }
      if (config.enable_prefix_caching && config.max_num_seqs == 1) {
        // The 2nd shared-head prompt saves the checkpoint, the 3rd to 6th start from it.
        EXPECT_GE(checkpoints.num_restored, 4) << name;
        EXPECT_GE(engine->kv_cache_manager().prefix_cache_stats().num_hit_tokens, 4 * 48) << name;
      }
      if (!config.enable_prefix_caching) {
        EXPECT_EQ(checkpoints.num_restored, 0) << name;
      }
      EXPECT_EQ(engine->state_pool()->num_request_slots(), 0) << name;
    }
  }
};

TEST_P(HybridEngine, GreedyRowsAreTheSameUnderEverySchedule) {
  expect_every_schedule_equal(SamplingParams{.max_tokens = 24});
}

TEST_P(HybridEngine, SeededSamplesAreTheSameUnderEverySchedule) {
  expect_every_schedule_equal(SamplingParams{
      .n = 2, .temperature = 0.9f, .top_k = 40, .top_p = 0.95f, .seed = 77, .max_tokens = 16});
}

INSTANTIATE_TEST_SUITE_P(TinyArch, HybridEngine, ::testing::ValuesIn(kHybridCases),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace sluice::test
