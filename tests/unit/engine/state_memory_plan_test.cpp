// A hybrid model's state slots in the memory plan: max_num_seqs running slots plus the
// checkpoints, capped at half the budget, the KV blocks from the rest; a recurrent layer holds
// no K and V.
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/memory_plan.h"

namespace sluice {
namespace {

// 4 layers, 3 of them Gated DeltaNet: per DeltaNet layer a [3, 2 x 16 + 32] conv history and
// 4 value heads of [8, 8] states, 192 + 256 = 448 floats; 1,344 floats = 5,376 bytes a slot.
ModelConfig tiny_hybrid_config() {
  ModelConfig config;
  config.num_layers = 4;
  config.num_heads = 4;
  config.num_kv_heads = 2;
  config.head_dim = 16;
  config.hidden_size = 64;
  config.max_position_embeddings = 1024;
  config.deltanet = DeltaNetConfig{
      .num_k_heads = 2, .num_v_heads = 4, .k_head_dim = 8, .v_head_dim = 8, .conv_kernel = 4};
  config.layers.resize(4);
  for (int l = 0; l < 3; ++l) config.layers[static_cast<size_t>(l)].kind = LayerKind::DeltaNet;
  return config;
}

TEST(StateMemoryPlan, NoSlotsWithoutState) {
  const StateSlotPlan plan = plan_state_slots(EngineConfig{}, 0, size_t{1} << 30);
  EXPECT_EQ(plan.num_slots, 0);
  EXPECT_EQ(plan.pool_bytes(), 0u);
  EXPECT_EQ(describe_state_slots(plan), "");
}

TEST(StateMemoryPlan, RunningSlotsAndCheckpointsWhenTheBudgetAllows) {
  EngineConfig engine;
  engine.max_num_seqs = 32;
  engine.max_state_checkpoints = 4;
  const StateSlotPlan plan = plan_state_slots(engine, 1000, 1'000'000);
  EXPECT_EQ(plan.num_slots, 36);
  EXPECT_EQ(plan.num_wanted, 36);
  EXPECT_FALSE(plan.is_capped);
  EXPECT_EQ(plan.pool_bytes(), 36'000u);
}

TEST(StateMemoryPlan, TheStateTakesAtMostHalfTheBudget) {
  EngineConfig engine;
  engine.max_num_seqs = 256;
  engine.max_state_checkpoints = 4;
  // 48 MiB slots (a Qwen3.5-9B shape) in a 1 GiB budget: 512 MiB / 48 MiB = 10 slots.
  const size_t slot_bytes = size_t{48} << 20;
  const StateSlotPlan plan = plan_state_slots(engine, slot_bytes, size_t{1} << 30);
  EXPECT_EQ(plan.num_slots, 10);
  EXPECT_TRUE(plan.is_capped);
  EXPECT_EQ(plan.num_wanted, 260);
  EXPECT_EQ(describe_state_slots(plan),
            "state slots: 10 x 48.0 MiB = 480.0 MiB (6 running + 4 prefix checkpoints), capped "
            "by the budget: 260 wanted");
  // Even a budget below one slot gets one (the blocks' check refuses it then).
  EXPECT_EQ(plan_state_slots(engine, slot_bytes, size_t{1} << 20).num_slots, 1);
}

TEST(StateMemoryPlan, AnExplicitSlotCountIsKept) {
  EngineConfig engine;
  engine.num_state_slots = 3;
  EXPECT_EQ(plan_state_slots(engine, 1 << 20, 1 << 10).num_slots, 3);
}

TEST(StateMemoryPlan, TheBlocksGetWhatTheStateLeaves) {
  EngineConfig engine;
  engine.kv_cache_bytes = 1'000'000;
  // 400,000 bytes of state leave 600,000: 600 blocks of 1,000 bytes.
  EXPECT_EQ(plan_num_kv_blocks_beside_state(engine, 1000, 1024, size_t{2} << 30, 400'000), 600);
  EXPECT_EQ(plan_num_kv_blocks_beside_state(engine, 1000, 1024, size_t{2} << 30, 0), 1000);
  EXPECT_THROW(plan_num_kv_blocks_beside_state(engine, 1000, 1024, size_t{2} << 30, 999'500),
               Error);
  engine.kv_cache_bytes = 0;
  engine.num_kv_blocks = 7;  // a fixed pool stays fixed
  EXPECT_EQ(plan_num_kv_blocks_beside_state(engine, 1000, 1024, size_t{2} << 30, 400'000), 7);
}

TEST(StateMemoryPlan, TheCpuPlanOfAHybridModel) {
  const ModelConfig config = tiny_hybrid_config();
  EngineConfig engine;
  engine.max_num_seqs = 8;
  engine.max_state_checkpoints = 2;
  engine.kv_cache_bytes = 1 << 20;
  const MemoryPlan plan = plan_memory(config, 0, engine, {}, 16);
  // K and V of the one attention layer: 2 x 2 heads x 16 x 4 bytes.
  EXPECT_EQ(plan.kv_bytes_per_token, 256u);
  EXPECT_EQ(plan.state.slot_bytes, 5376u);
  EXPECT_EQ(plan.state.num_slots, 10);
  // (1 MiB - 10 x 5,376) / (16 x 256) = 994,816 / 4,096 = 242.9: 242 blocks.
  EXPECT_EQ(plan.num_blocks, 242);
  EXPECT_EQ(plan.max_concurrent_rows, 8);
  // Fewer slots than rows that fit in the blocks: the slots bound the rows at once.
  engine.num_state_slots = 3;
  EXPECT_EQ(plan_memory(config, 0, engine, {}, 16).max_concurrent_rows, 3);
}

}  // namespace
}  // namespace sluice
