// Batch invariance, preemption and prefix caching for every architecture of the model definition:
// the tiny-arch models (../shared/models/tiny-arch) run 40 Alpaca rows (each also repeated with
// one more token, so the copies hit the prefix cache) under several schedules, and every row's
// greedy tokens must equal the row run alone. Gemma 2/3 add sliding windows and soft-caps,
// Qwen3 q/k norms, Phi-3 fused projections, Q4_K_M quantized products.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

constexpr size_t kNumRows = 24;
constexpr size_t kMaxPromptTokens = 90;  // the models' context is 256

struct ArchCase {
  const char* name;
  const char* path;
};

void PrintTo(const ArchCase& c, std::ostream* os) {
  *os << c.name;
}

const ArchCase kCases[] = {
    {"gemma2", "models/tiny-arch/gemma2/gguf/gemma2-F32.gguf"},
    {"gemma3", "models/tiny-arch/gemma3/hf"},
    {"qwen3", "models/tiny-arch/qwen3/gguf/qwen3-F16.gguf"},
    {"phi3", "models/tiny-arch/phi3/hf"},
    {"llama_headdim", "models/tiny-arch/llama-headdim/gguf/llama-headdim-F32.gguf"},
    {"llama_q4_k_m", "models/tiny-arch/llama-q/gguf/llama-q-Q4_K_M.gguf"},
};

class ArchitectureSchedules : public ::testing::TestWithParam<ArchCase> {};

TEST_P(ArchitectureSchedules, RowsAreTheSameUnderEverySchedule) {
  const StoriesModel model(GetParam().path);
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& text : alpaca_prompts(kNumRows)) {
    std::vector<int32_t> ids = model.encode(text);
    ids.resize(std::min(ids.size(), kMaxPromptTokens));
    prompts.push_back(ids);
    ids.push_back(ids.back());  // a copy one token longer: a prefix-cache hit on its blocks
    prompts.push_back(ids);
  }
  const SamplingParams params{.max_tokens = 32};
  auto alone_engine = model.make_engine(EngineConfig{.max_num_seqs = 1});
  const auto alone = run_all(*alone_engine, prompts, params);
  ASSERT_EQ(alone.size(), prompts.size());

  const std::pair<const char*, EngineConfig> schedules[] = {
      {"max_num_seqs 7", EngineConfig{.max_num_seqs = 7}},
      {"max_num_seqs 48", EngineConfig{.max_num_seqs = 48}},
      {"a 20-block pool (preemption)", EngineConfig{.num_kv_blocks = 20}},
      {"chunked prefill, 13 tokens a step",
       EngineConfig{.max_num_seqs = 16, .max_num_batched_tokens = 13}},
  };
  for (const auto& [name, config] : schedules) {
    auto engine = model.make_engine(config);
    RunStats stats;
    const auto batch = run_all(*engine, prompts, params, &stats);
    ASSERT_EQ(batch.size(), alone.size()) << name;
    int num_differ = 0;
    for (const auto& [key, f] : alone) {
      if (batch.at(key).output_token_ids == f.output_token_ids) continue;
      if (++num_differ <= 3) ADD_FAILURE() << name << ": row " << key.first << " differs";
    }
    EXPECT_EQ(num_differ, 0) << GetParam().name << ", " << name;
    if (config.num_kv_blocks > 0) {
      EXPECT_GT(stats.num_preemptions, 0) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TinyArch, ArchitectureSchedules, ::testing::ValuesIn(kCases),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace sluice::test
