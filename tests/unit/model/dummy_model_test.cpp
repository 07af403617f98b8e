#include "engine/model/dummy_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "engine/backend/cpu_backend.h"
#include "engine/core/error.h"

namespace sluice {
namespace {

// Shapes from the published config.json of each model.
TEST(DummyModel, PresetsHaveThePublishedShapes) {
  const ModelConfig llama2 = dummy_model_config("llama-2-7b");
  EXPECT_EQ(llama2.hidden_size, 4096);
  EXPECT_EQ(llama2.intermediate_size, 11008);
  EXPECT_EQ(llama2.num_layers, 32);
  EXPECT_EQ(llama2.num_kv_heads, 32);
  EXPECT_EQ(llama2.vocab_size, 32000);
  const ModelConfig llama3 = dummy_model_config("llama-3-8b");
  EXPECT_EQ(llama3.num_kv_heads, 8);
  EXPECT_EQ(llama3.vocab_size, 128256);
  EXPECT_EQ(llama3.head_dim, 128);
  const ModelConfig qwen = dummy_model_config("qwen2.5-1.5b");
  EXPECT_TRUE(qwen.has_qkv_bias);
  EXPECT_TRUE(qwen.tie_word_embeddings);
  EXPECT_EQ(qwen.num_kv_heads, 2);
  EXPECT_THROW(dummy_model_config("gpt-5"), Error);
}

TEST(DummyModel, WeightsAreSeededAndRunOnTheCpu) {
  const auto a = make_dummy_model("stories15M", DType::F32, 1);
  const auto b = make_dummy_model("stories15M", DType::F32, 1);
  const auto c = make_dummy_model("stories15M", DType::F32, 2);
  const auto& wa = a->weights.layers[3].w_up;
  ASSERT_EQ(wa.shape, (std::vector<int64_t>{768, 288}));
  EXPECT_EQ(std::memcmp(wa.data, b->weights.layers[3].w_up.data, wa.num_bytes), 0);
  EXPECT_NE(std::memcmp(wa.data, c->weights.layers[3].w_up.data, wa.num_bytes), 0);

  CpuBackend backend(*a, CpuBackendOptions{.num_threads = 2});
  backend.allocate_kv_cache(4, 16);
  BatchInputs in;
  for (int i = 0; i < 5; ++i) {
    in.token_ids.push_back(100 + i);
    in.positions.push_back(i);
    in.slot_mapping.push_back(i);
  }
  in.query_start_loc = {0, 5};
  in.seq_lens = {5};
  in.block_tables = {0};
  in.max_blocks_per_request = 1;
  in.logits_indices = {4};
  std::vector<float> logits;
  backend.forward(in, logits);
  ASSERT_EQ(logits.size(), 32000u);
  for (const float x : logits) ASSERT_TRUE(std::isfinite(x));
}

TEST(DummyModel, Bf16WeightsAreStoredAsBf16) {
  const auto m = make_dummy_model("stories15M", DType::BF16);
  EXPECT_EQ(m->weights.layers[0].wq.dtype, DType::BF16);
  EXPECT_EQ(m->weights.layers[0].wq.num_bytes, 288u * 288 * 2);
  EXPECT_EQ(m->weights.layers[0].attn_norm.dtype, DType::F32);
}

}  // namespace
}  // namespace sluice
