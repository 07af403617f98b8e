// Memory plans shown before a run: the CPU plan and the GPU plan (BF16 weights and KV cache,
// activations of the largest step, the pool from gpu_memory_utilization), checked against the
// published sizes of Llama-3-8B.
#include <gtest/gtest.h>

#include "engine/memory_plan.h"
#include "engine/model/dummy_model.h"

namespace sluice {
namespace {

constexpr size_t kGiB = size_t{1} << 30;
constexpr int64_t kLlama3Weights = 8'030'261'248;  // Meta-Llama-3-8B, as published

TEST(GpuMemoryPlan, Llama3On80GiBFollowsTheUtilization) {
  const ModelConfig config = dummy_model_config("llama-3-8b");
  EngineConfig engine;
  engine.gpu_memory_utilization = 0.9;
  const GpuDevicePlan gpu{"cuda:0 test", 80 * kGiB, kLlama3Weights * 2};
  const MemoryPlan plan = plan_gpu_memory(config, gpu, engine, {100, 200, 300}, 256);
  // 32 layers x 8 KV heads x 128 x (K and V) x 2 bytes: 128 KiB per token, the known figure.
  EXPECT_EQ(plan.kv_bytes_per_token, size_t{128} << 10);
  EXPECT_EQ(plan.weight_bytes, static_cast<size_t>(kLlama3Weights) * 2);
  EXPECT_EQ(plan.device_budget_bytes, static_cast<size_t>(0.9 * 80.0 * static_cast<double>(kGiB)));
  EXPECT_GT(plan.activation_bytes, 0u);
  EXPECT_LT(plan.activation_bytes, kGiB);  // 2048 tokens of activations, 256 rows of fp32 logits
  const size_t block_bytes = plan.kv_bytes_per_token * 16;
  const size_t spent = plan.weight_bytes + plan.activation_bytes + plan.kv_pool_bytes;
  EXPECT_LE(spent, plan.device_budget_bytes);
  EXPECT_GT(spent + block_bytes, plan.device_budget_bytes);  // the pool takes all that is left
  EXPECT_EQ(plan.max_concurrent_rows, 256);                  // ~450 token rows: max_num_seqs binds
  EXPECT_EQ(plan.mean_row_tokens, 200.0 + 256.0);
}

// --kv-cache-dtype fp8: a byte per K/V element and a float scale per token and KV head, so
// Llama-3-8B's 128 KiB a token becomes 2 x 32 x (8 x 128 + 8 x 4) = 66 KiB, and the same
// budget holds 1.94x the blocks.
TEST(GpuMemoryPlan, AnFp8KvCacheHoldsAboutTwiceTheTokens) {
  const ModelConfig config = dummy_model_config("llama-3-8b");
  EngineConfig bf16;
  EngineConfig fp8;
  fp8.kv_cache_dtype = KvCacheDType::Fp8;
  const GpuDevicePlan gpu{"cuda:0 test", 80 * kGiB, kLlama3Weights * 2};
  const MemoryPlan a = plan_gpu_memory(config, gpu, bf16, {}, 256);
  const MemoryPlan b = plan_gpu_memory(config, gpu, fp8, {}, 256);
  EXPECT_EQ(b.kv_bytes_per_token, size_t{2 * 32 * (8 * 128 + 8 * 4)});
  EXPECT_EQ(b.activation_bytes, a.activation_bytes);
  const double ratio = static_cast<double>(b.num_blocks) / a.num_blocks;
  EXPECT_NEAR(ratio, 131072.0 / 67584.0, 0.01);
  EXPECT_LE(b.kv_pool_bytes + b.weight_bytes + b.activation_bytes, b.device_budget_bytes);
}

TEST(GpuMemoryPlan, AFixedPoolIsKeptAndATooSmallDeviceLeavesNone) {
  const ModelConfig config = dummy_model_config("llama-3-8b");
  EngineConfig engine;
  engine.kv_cache_bytes = 4 * kGiB;
  const MemoryPlan fixed =
      plan_gpu_memory(config, {"g", 80 * kGiB, kLlama3Weights * 2}, engine, {}, 128);
  EXPECT_EQ(fixed.kv_pool_bytes, 4 * kGiB);
  EngineConfig automatic;
  const MemoryPlan small =
      plan_gpu_memory(config, {"g", 16 * kGiB, kLlama3Weights * 2}, automatic, {}, 128);
  EXPECT_EQ(small.num_blocks, 0);
  EXPECT_EQ(small.max_concurrent_rows, 0);
}

TEST(CpuMemoryPlan, Fp32KvAndTheEnginesDefaultPool) {
  const ModelConfig config = dummy_model_config("llama-3-8b");
  EngineConfig engine;
  engine.kv_cache_bytes = 2 * kGiB;
  const MemoryPlan plan = plan_memory(config, 123, engine, {}, 128);
  EXPECT_EQ(plan.kv_bytes_per_token, size_t{256} << 10);  // fp32 on the CPU
  EXPECT_EQ(plan.weight_bytes, 123u);
  EXPECT_EQ(plan.kv_pool_bytes, 2 * kGiB);
  EXPECT_EQ(plan.device_total_bytes, 0u);
  // 2 GiB / 256 KiB = 8192 tokens = 512 blocks of 16; a 128-token row takes 8 blocks.
  EXPECT_EQ(plan.max_concurrent_rows, 64);
}

}  // namespace
}  // namespace sluice
