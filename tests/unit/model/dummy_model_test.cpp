#include "engine/model/dummy_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/error.h"
#include "engine/core/quant_blocks.h"
#include "engine/core/system_memory.h"
#include "engine/model/weight_roles.h"
#include "tests/support/single_request_batch.h"

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
  const auto& wa = a->weights.layers[3][WeightRole::Up];
  ASSERT_EQ(wa.shape, (std::vector<int64_t>{768, 288}));
  EXPECT_EQ(std::memcmp(wa.data, b->weights.layers[3][WeightRole::Up].data, wa.num_bytes), 0);
  EXPECT_NE(std::memcmp(wa.data, c->weights.layers[3][WeightRole::Up].data, wa.num_bytes), 0);

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
  EXPECT_EQ(m->weights.layers[0][WeightRole::Wq].dtype, DType::BF16);
  EXPECT_EQ(m->weights.layers[0][WeightRole::Wq].num_bytes, 288u * 288 * 2);
  EXPECT_EQ(m->weights.layers[0][WeightRole::AttnNorm].dtype, DType::F32);
}

// The presets' numbers are those of each model's config.json (see dummy_model.cpp).
TEST(DummyModel, NewPresetsHaveThePublishedShapesAndOptions) {
  const ModelConfig qwen3 = dummy_model_config("qwen3-8b");
  EXPECT_EQ(qwen3.architecture, "qwen3");
  EXPECT_EQ(qwen3.head_dim, 128);
  EXPECT_TRUE(qwen3.qk_norm);
  EXPECT_FALSE(qwen3.tie_word_embeddings);
  EXPECT_EQ(qwen3.vocab_size, 151936);
  EXPECT_EQ(qwen3.max_position_embeddings, 40960);
  EXPECT_EQ(qwen3.rms_norm_eps, 1e-6f);
  EXPECT_EQ(qwen3.window_summary(), "");

  const ModelConfig gemma2 = dummy_model_config("gemma-2-9b");
  EXPECT_EQ(gemma2.activation, Activation::GeluTanh);
  EXPECT_TRUE(gemma2.post_norms);
  EXPECT_TRUE(gemma2.tie_word_embeddings);
  EXPECT_EQ(gemma2.head_dim, 256);
  EXPECT_EQ(gemma2.q_size(), 4096);  // 16 heads of 256 on a hidden size of 3584
  EXPECT_EQ(gemma2.attn_logit_softcap, 50.0f);
  EXPECT_EQ(gemma2.final_logit_softcap, 30.0f);
  EXPECT_FLOAT_EQ(gemma2.embedding_scale, std::sqrt(3584.0f));
  ASSERT_EQ(gemma2.layers.size(), 42u);
  EXPECT_EQ(gemma2.layers[0].sliding_window, 4096);
  EXPECT_EQ(gemma2.layers[1].sliding_window, 0);
  EXPECT_EQ(gemma2.vocab_size, 256000);

  const ModelConfig gemma3 = dummy_model_config("gemma-3-12b");
  EXPECT_TRUE(gemma3.qk_norm);
  EXPECT_TRUE(gemma3.post_norms);
  EXPECT_EQ(gemma3.vocab_size, 262208);
  ASSERT_EQ(gemma3.layers.size(), 48u);
  for (const int l : {0, 4}) {  // local: window 1024, base 10000, no scaling
    EXPECT_EQ(gemma3.layers[l].sliding_window, 1024) << l;
    EXPECT_EQ(gemma3.layers[l].rope_theta, 10000.0f) << l;
    EXPECT_EQ(gemma3.layers[l].rope_scaling.type, RopeScaling::Type::None) << l;
  }
  EXPECT_EQ(gemma3.layers[5].sliding_window, 0);  // every 6th layer is global
  EXPECT_EQ(gemma3.layers[5].rope_theta, 1000000.0f);
  EXPECT_EQ(gemma3.layers[5].rope_scaling.type, RopeScaling::Type::Linear);
  EXPECT_EQ(gemma3.layers[5].rope_scaling.factor, 8.0f);

  const ModelConfig phi3 = dummy_model_config("phi-3-mini");
  EXPECT_EQ(phi3.architecture, "phi3");
  EXPECT_EQ(phi3.vocab_size, 32064);
  EXPECT_EQ(phi3.num_kv_heads, 32);
  EXPECT_EQ(phi3.sliding_window,
            0);  // config.json's 2047 is applied by neither llama.cpp nor Sluice

  const ModelConfig nemo = dummy_model_config("mistral-nemo-12b");
  EXPECT_EQ(nemo.architecture, "mistral");
  EXPECT_EQ(nemo.hidden_size, 5120);
  EXPECT_EQ(nemo.head_dim, 128);  // not 5120 / 32
  EXPECT_EQ(nemo.q_size(), 4096);
  EXPECT_EQ(nemo.vocab_size, 131072);
  EXPECT_EQ(nemo.max_position_embeddings, 1024000);

  const ModelConfig llama31 = dummy_model_config("llama-3.1-8b");
  EXPECT_EQ(llama31.rope_scaling.type, RopeScaling::Type::Llama3);
  EXPECT_EQ(llama31.rope_scaling.factor, 8.0f);
  EXPECT_EQ(llama31.rope_scaling.low_freq_factor, 1.0f);
  EXPECT_EQ(llama31.rope_scaling.high_freq_factor, 4.0f);
  EXPECT_EQ(llama31.rope_scaling.original_max_position_embeddings, 8192);
  EXPECT_EQ(llama31.rope_theta, 500000.0f);
  EXPECT_EQ(llama31.max_position_embeddings, 131072);

  const ModelConfig tinyllama = dummy_model_config("tinyllama-1.1b");
  EXPECT_EQ(tinyllama.hidden_size, 2048);
  EXPECT_EQ(tinyllama.intermediate_size, 5632);
  EXPECT_EQ(tinyllama.num_layers, 22);
  EXPECT_EQ(tinyllama.num_heads, 32);
  EXPECT_EQ(tinyllama.num_kv_heads, 4);
  EXPECT_EQ(tinyllama.vocab_size, 32000);
  EXPECT_EQ(tinyllama.max_position_embeddings, 2048);
  EXPECT_FALSE(tinyllama.tie_word_embeddings);

  // Test shapes are accepted but not listed.
  const auto listed = dummy_model_presets();
  EXPECT_EQ(std::count(listed.begin(), listed.end(), "tiny-gemma3"), 0);
  EXPECT_EQ(dummy_model_config("tiny-gemma3").num_layers, 6);
}

// Each tensor of the in-memory model has its role's shape (weight_roles.h).
void expect_role_shapes(const Model& m) {
  const ModelConfig& c = m.config;
  for (int l = 0; l < c.num_layers; ++l) {
    for (const WeightRole role : all_weight_roles()) {
      const WeightTensor* t = is_layer_role(role) ? &m.weights.layers[l][role] : nullptr;
      if (!t || t->empty()) continue;
      EXPECT_EQ(t->shape, weight_shape(role, c)) << weight_role_name(role);
      EXPECT_EQ(t->num_bytes, dtype_num_bytes(t->dtype, t->num_elements()));
    }
  }
}

TEST(DummyModel, WeightsCoverEveryRoleTheArchitectureUses) {
  const auto qwen3 = make_dummy_model("tiny-qwen3");
  const LayerWeights& q = qwen3->weights.layers[1];
  EXPECT_EQ(q[WeightRole::QNorm].shape, (std::vector<int64_t>{128}));
  EXPECT_EQ(q[WeightRole::KNorm].shape, (std::vector<int64_t>{128}));
  EXPECT_TRUE(q[WeightRole::PostAttnNorm].empty());
  EXPECT_TRUE(q[WeightRole::Bq].empty());
  expect_role_shapes(*qwen3);

  const auto gemma2 = make_dummy_model("tiny-gemma2");
  const LayerWeights& g2 = gemma2->weights.layers[0];
  EXPECT_FALSE(g2[WeightRole::PostAttnNorm].empty());
  EXPECT_FALSE(g2[WeightRole::PostFfnNorm].empty());
  EXPECT_TRUE(g2[WeightRole::QNorm].empty());
  EXPECT_EQ(gemma2->weights.lm_head.data, gemma2->weights.token_embedding.data);  // tied
  expect_role_shapes(*gemma2);

  const auto gemma3 = make_dummy_model("tiny-gemma3");
  for (const LayerWeights& l : gemma3->weights.layers) {
    for (const WeightTensor* t : {&l[WeightRole::QNorm], &l[WeightRole::KNorm],
                                  &l[WeightRole::PostAttnNorm], &l[WeightRole::PostFfnNorm]}) {
      ASSERT_FALSE(t->empty());
      EXPECT_EQ(t->dtype, DType::F32);
    }
  }
  expect_role_shapes(*gemma3);

  const auto qwen2 = make_dummy_model("tiny-qwen2", DType::BF16);
  EXPECT_EQ(qwen2->weights.layers[0][WeightRole::Bq].dtype,
            DType::F32);  // biases stay F32, as norms do
  EXPECT_EQ(qwen2->weights.layers[0][WeightRole::Bv].shape, (std::vector<int64_t>{128}));
  expect_role_shapes(*qwen2);

  // Phi-3's files fuse [q; k; v] and [gate; up]; the model holds the parts, as a load gives them.
  const auto phi3 = make_dummy_model("tiny-phi3");
  const LayerWeights& p = phi3->weights.layers[0];
  EXPECT_EQ(p[WeightRole::Wk].shape, (std::vector<int64_t>{128, 256}));
  EXPECT_EQ(p[WeightRole::Gate].shape, (std::vector<int64_t>{512, 256}));
  EXPECT_EQ(phi3->config.rope_dims(), 32);  // partial rotary: half of head_dim 64
  expect_role_shapes(*phi3);
}

// Every model builds and runs a step on the CPU with finite logits.
TEST(DummyModel, TestShapesOfEveryArchitectureRunOnTheCpu) {
  for (const char* preset :
       {"tiny-llama", "tiny-llama3", "tiny-mistral", "tiny-qwen2", "tiny-qwen3", "tiny-gemma2",
        "tiny-gemma3", "tiny-phi3", "tiny-qwen3moe", "tiny-mixtral", "tiny-gpt-oss"}) {
    const auto m = make_dummy_model(preset, DType::F32, 5);
    CpuBackend backend(*m, CpuBackendOptions{.num_threads = 2});
    backend.allocate_kv_cache(1, 16);
    std::vector<float> logits;
    backend.forward(test::single_request_batch({3, 14, 25, 36, 47, 58, 69, 80, 91}, 0, 1, false),
                    logits);
    ASSERT_EQ(logits.size(), 512u) << preset;
    for (const float x : logits) ASSERT_TRUE(std::isfinite(x)) << preset;
  }
}

// Mean and standard deviation of n values.
std::pair<double, double> moments(const std::vector<float>& v) {
  double sum = 0, sum_sq = 0;
  for (const float x : v) {
    sum += x;
    sum_sq += static_cast<double>(x) * x;
  }
  const double mean = sum / static_cast<double>(v.size());
  return {mean, std::sqrt(sum_sq / static_cast<double>(v.size()) - mean * mean)};
}

constexpr double kFloatStd = 0.035 / 1.7320508075688772;  // uniform on [-0.035, 0.035]

// ggml's Q4_K formula (dequantize_row_q4_K), written out here as the oracle.
std::vector<float> dequantize_q4_k(const uint8_t* data, int64_t num_blocks) {
  std::vector<float> out;
  for (int64_t b = 0; b < num_blocks; ++b) {
    quant::BlockQ4_K block;
    std::memcpy(&block, data + b * sizeof block, sizeof block);
    const float d = f16_to_f32(block.d), dmin = f16_to_f32(block.dmin);
    const uint8_t* s = block.scales;
    for (int j = 0; j < 8; ++j) {
      const int sc = j < 4 ? s[j] & 63 : (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
      const int m = j < 4 ? s[j + 4] & 63 : (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
      for (int l = 0; l < 32; ++l) {
        const uint8_t byte = block.qs[(j / 2) * 32 + l];
        const int q = j % 2 == 0 ? byte & 0xF : byte >> 4;
        out.push_back(d * static_cast<float>(sc) * static_cast<float>(q) -
                      dmin * static_cast<float>(m));
      }
    }
  }
  return out;
}

TEST(DummyModel, QuantizedWeightsAreRandomBlocksWithTheFloatSpread) {
  const auto q8 = make_dummy_model("tiny-llama", DType::Q8_0, 4);
  const WeightTensor& w8 = q8->weights.layers[0][WeightRole::Up];
  ASSERT_EQ(w8.dtype, DType::Q8_0);
  ASSERT_EQ(w8.num_bytes, dtype_num_bytes(DType::Q8_0, 512 * 256));
  EXPECT_EQ(q8->weights.layers[0][WeightRole::FfnNorm].dtype, DType::F32);
  std::vector<float> values(static_cast<size_t>(w8.num_elements()));
  dequantize_row(DType::Q8_0, w8.data, values.data(), w8.num_elements());
  for (int64_t b = 0; b < w8.num_elements() / 32; ++b) {
    const auto* q = reinterpret_cast<const int8_t*>(w8.data + b * 34 + 2);
    for (int i = 0; i < 32; ++i) ASSERT_NE(q[i], -128);  // ggml's quantizer never writes it
  }
  auto [mean, spread] = moments(values);
  EXPECT_NEAR(mean, 0.0, 0.002);
  EXPECT_NEAR(spread, kFloatStd, 0.1 * kFloatStd);

  const auto q4 = make_dummy_model("tiny-llama", DType::Q4_K, 4);
  const WeightTensor& w4 = q4->weights.layers[1][WeightRole::Wq];
  ASSERT_EQ(w4.dtype, DType::Q4_K);
  ASSERT_EQ(w4.num_bytes, 256u * 144);  // 256 rows of one 256-value block
  values = dequantize_q4_k(w4.data, 256);
  for (const float x : values) ASSERT_TRUE(std::isfinite(x));
  std::tie(mean, spread) = moments(values);
  EXPECT_NEAR(mean, 0.0, 0.004);
  EXPECT_NEAR(spread, kFloatStd, 0.15 * kFloatStd);
}

TEST(DummyModel, EveryQuantizedTypeFillsDeterministicallyWithFiniteScales) {
  for (const DTypeTraits& traits : all_dtype_traits()) {
    if (!traits.quantized) continue;
    const auto a = make_dummy_model("tiny-qwen3", traits.dtype, 9);
    const auto b = make_dummy_model("tiny-qwen3", traits.dtype, 9);
    const auto c = make_dummy_model("tiny-qwen3", traits.dtype, 10);
    const WeightTensor& t = a->weights.layers[0][WeightRole::Down];
    ASSERT_EQ(t.dtype, traits.dtype) << traits.name;
    ASSERT_EQ(t.num_bytes, dtype_num_bytes(traits.dtype, 256 * 512)) << traits.name;
    EXPECT_EQ(std::memcmp(t.data, b->weights.layers[0][WeightRole::Down].data, t.num_bytes), 0);
    EXPECT_NE(std::memcmp(t.data, c->weights.layers[0][WeightRole::Down].data, t.num_bytes), 0);
    // Every 16-bit word that is a block's fp16 d is finite and non-zero: check d of the first
    // block of each type at its layout offset.
    if (traits.dtype == DType::MXFP4) {  // an E8M0 exponent byte, not an fp16 d
      for (size_t blk = 0; blk < t.num_bytes / traits.block_bytes; ++blk) {
        const float d = quant::mxfp4_scale(t.data[blk * traits.block_bytes]);
        ASSERT_TRUE(std::isnormal(d)) << traits.name << " block " << blk;
      }
      continue;
    }
    size_t d_offset = 0;
    switch (traits.dtype) {
      case DType::Q2_K:
        d_offset = offsetof(quant::BlockQ2_K, d);
        break;
      case DType::Q3_K:
        d_offset = offsetof(quant::BlockQ3_K, d);
        break;
      case DType::Q6_K:
        d_offset = offsetof(quant::BlockQ6_K, d);
        break;
      default:
        break;  // d leads the block
    }
    for (size_t blk = 0; blk < t.num_bytes / traits.block_bytes; ++blk) {
      uint16_t d_bits;
      std::memcpy(&d_bits, t.data + blk * traits.block_bytes + d_offset, 2);
      const float d = f16_to_f32(d_bits);
      ASSERT_TRUE(std::isfinite(d) && d > 0.0f) << traits.name << " block " << blk;
    }
  }
}

// The memory check counts the stored bytes: whole blocks of the quantized type.
TEST(DummyModel, WeightBytesCountQuantizedBlocks) {
  const ModelConfig c = dummy_model_config("llama-3.1-8b");
  const int64_t per_layer = 4096LL * 4096 * 2 + 2LL * 1024 * 4096 + 3LL * 14336 * 4096;
  const int64_t matrices = 2LL * 128256 * 4096 + 32 * per_layer;
  const int64_t norms = 32LL * 2 * 4096 + 4096;
  EXPECT_EQ(dummy_model_weight_bytes(c, DType::Q4_K),
            static_cast<size_t>(matrices / 256 * 144 + norms * 4));
  EXPECT_EQ(dummy_model_weight_bytes(c, DType::BF16),
            static_cast<size_t>(matrices * 2 + norms * 4));
}

TEST(DummyModel, ATypeWhoseBlocksDoNotTileTheRowsIsRefusedByTensor) {
  try {
    make_dummy_model("stories15M", DType::Q4_K);  // rows of 288 values
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("token_embd.weight"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("256"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("288"));
  }
  EXPECT_NO_THROW(make_dummy_model("stories15M", DType::Q8_0, 0, 1));  // 288 = 9 blocks of 32
}

// The mixture-of-experts presets' numbers are those of Qwen/Qwen3-30B-A3B, openai/gpt-oss-20b and
// mistralai/Mixtral-8x7B-v0.1's config.json, with the options their architecture rows give.
TEST(DummyModel, MoePresetsHaveThePublishedShapesAndOptions) {
  const auto listed = dummy_model_presets();
  for (const char* name : {"qwen3-30b-a3b", "gpt-oss-20b", "mixtral-8x7b"})
    EXPECT_EQ(std::count(listed.begin(), listed.end(), name), 1) << name;
  for (const char* name : {"tiny-qwen3moe", "tiny-mixtral", "tiny-gpt-oss"})
    EXPECT_EQ(std::count(listed.begin(), listed.end(), name), 0) << name;

  const ModelConfig qwen = dummy_model_config("qwen3-30b-a3b");
  EXPECT_EQ(qwen.architecture, "qwen3moe");
  EXPECT_EQ(qwen.hidden_size, 2048);
  EXPECT_EQ(qwen.num_layers, 48);
  EXPECT_EQ(qwen.num_heads, 32);
  EXPECT_EQ(qwen.num_kv_heads, 4);
  EXPECT_EQ(qwen.head_dim, 128);
  EXPECT_EQ(qwen.num_experts, 128);
  EXPECT_EQ(qwen.num_experts_used, 8);
  EXPECT_EQ(qwen.expert_intermediate_size, 768);
  EXPECT_EQ(qwen.vocab_size, 151936);
  EXPECT_EQ(qwen.max_position_embeddings, 40960);
  EXPECT_EQ(qwen.rope_theta, 1000000.0f);
  EXPECT_EQ(qwen.rms_norm_eps, 1e-6f);
  EXPECT_TRUE(qwen.qk_norm);
  EXPECT_FALSE(qwen.tie_word_embeddings);
  EXPECT_EQ(qwen.moe_gating, MoeGating::SoftmaxTopK);
  EXPECT_TRUE(qwen.moe_renormalize);  // config.json's norm_topk_prob
  EXPECT_FALSE(qwen.moe_biases);
  EXPECT_EQ(dummy_model_config("qwen3-30b-a3b", 8).num_layers, 8);

  const ModelConfig oss = dummy_model_config("gpt-oss-20b");
  EXPECT_EQ(oss.architecture, "gpt-oss");
  EXPECT_EQ(oss.hidden_size, 2880);
  EXPECT_EQ(oss.num_layers, 24);
  EXPECT_EQ(oss.num_heads, 64);
  EXPECT_EQ(oss.num_kv_heads, 8);
  EXPECT_EQ(oss.head_dim, 64);
  EXPECT_EQ(oss.num_experts, 32);
  EXPECT_EQ(oss.num_experts_used, 4);
  EXPECT_EQ(oss.expert_intermediate_size, 2880);
  EXPECT_EQ(oss.vocab_size, 201088);
  EXPECT_EQ(oss.rope_theta, 150000.0f);
  EXPECT_TRUE(oss.has_qkv_bias);
  EXPECT_TRUE(oss.has_output_bias);
  EXPECT_TRUE(oss.attention_sinks);
  EXPECT_TRUE(oss.moe_biases);
  EXPECT_EQ(oss.moe_gating, MoeGating::TopKSoftmax);
  EXPECT_EQ(oss.activation, Activation::SwigluOai);
  EXPECT_EQ(oss.layers[0].sliding_window, 128);
  EXPECT_EQ(oss.layers[1].sliding_window, 0);
  EXPECT_EQ(oss.layers[22].sliding_window, 128);
  const RopeScaling& yarn = oss.layers[1].rope_scaling;
  EXPECT_EQ(yarn.type, RopeScaling::Type::Yarn);
  EXPECT_EQ(yarn.factor, 32.0f);
  EXPECT_EQ(yarn.original_max_position_embeddings, 4096);
  EXPECT_EQ(yarn.beta_fast, 32.0f);
  EXPECT_EQ(yarn.beta_slow, 1.0f);
  EXPECT_NEAR(yarn.attention_factor, 1.0 + 0.1 * std::log(32.0), 1e-6);

  const ModelConfig mixtral = dummy_model_config("mixtral-8x7b");
  EXPECT_EQ(mixtral.architecture, "mixtral");
  EXPECT_EQ(mixtral.hidden_size, 4096);
  EXPECT_EQ(mixtral.num_layers, 32);
  EXPECT_EQ(mixtral.num_kv_heads, 8);
  EXPECT_EQ(mixtral.num_experts, 8);
  EXPECT_EQ(mixtral.num_experts_used, 2);
  EXPECT_EQ(mixtral.expert_intermediate_size, 14336);
  EXPECT_EQ(mixtral.vocab_size, 32000);
  EXPECT_EQ(mixtral.max_position_embeddings, 32768);
  EXPECT_EQ(mixtral.rope_theta, 1000000.0f);
  EXPECT_EQ(mixtral.sliding_window, 0);
}

// A MoE model holds one stack per expert role and layer in memory, and ModelWeights::experts
// a view per expert into it, as a GGUF load gives them; the dense FFN roles are empty.
TEST(DummyModel, MoeWeightsAreExpertStacksWithAViewPerExpert) {
  const auto qwen = make_dummy_model("tiny-qwen3moe", DType::Q4_K, 3);
  ASSERT_EQ(qwen->weights.experts.size(), 2u);
  for (int l = 0; l < 2; ++l) {
    const LayerWeights& layer = qwen->weights.layers[l];
    EXPECT_TRUE(layer[WeightRole::Gate].empty());
    EXPECT_TRUE(layer[WeightRole::Down].empty());
    EXPECT_EQ(layer[WeightRole::Router].dtype, DType::F32);  // as llama.cpp keeps ffn_gate_inp
    EXPECT_EQ(layer[WeightRole::Router].shape, (std::vector<int64_t>{4, 256}));
    for (const WeightRole role : {WeightRole::GateExps, WeightRole::UpExps, WeightRole::DownExps}) {
      const std::vector<WeightTensor>& experts = qwen->weights.experts[l][role];
      ASSERT_EQ(experts.size(), 4u) << weight_role_name(role);
      for (size_t e = 0; e < experts.size(); ++e) {
        EXPECT_EQ(experts[e].shape, expert_slice_shape(role, qwen->config));
        EXPECT_EQ(experts[e].dtype, DType::Q4_K);
        EXPECT_EQ(experts[e].num_bytes, dtype_num_bytes(DType::Q4_K, 256 * 256));
        if (e > 0) {
          EXPECT_EQ(experts[e].data, experts[e - 1].data + experts[e - 1].num_bytes);
        }
      }
    }
  }
  // The experts differ from one another (each slice is drawn, not repeated).
  const auto& gates = qwen->weights.experts[0][WeightRole::GateExps];
  EXPECT_NE(std::memcmp(gates[0].data, gates[1].data, gates[0].num_bytes), 0);

  const auto oss = make_dummy_model("tiny-gpt-oss", DType::Q8_0, 3);
  const LayerWeights& o = oss->weights.layers[0];
  EXPECT_EQ(o[WeightRole::Sinks].shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(o[WeightRole::Bo].dtype, DType::F32);
  EXPECT_EQ(o[WeightRole::RouterBias].shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(o[WeightRole::Router].dtype, DType::F32);
  for (const WeightRole role :
       {WeightRole::GateExpsBias, WeightRole::UpExpsBias, WeightRole::DownExpsBias}) {
    const std::vector<WeightTensor>& biases = oss->weights.experts[1][role];
    ASSERT_EQ(biases.size(), 4u);
    EXPECT_EQ(biases[3].dtype, DType::F32);
    EXPECT_EQ(biases[3].shape, (std::vector<int64_t>{256}));
  }
  EXPECT_EQ(oss->weights.experts[1][WeightRole::DownExps][2].dtype, DType::Q8_0);
  // Dense models have no expert views.
  const auto dense = make_dummy_model("tiny-qwen3");
  for (const LayerExperts& l : dense->weights.experts) {
    for (const WeightRole role : all_weight_roles()) {
      if (is_layer_role(role)) {
        EXPECT_TRUE(l[role].empty());
      }
    }
  }
}

// The quantized MoE test shapes run a step on the CPU.
TEST(DummyModel, QuantizedMoeTestShapesRunOnTheCpu) {
  for (const char* preset : {"tiny-qwen3moe", "tiny-mixtral", "tiny-gpt-oss"}) {
    const auto m = make_dummy_model(preset, DType::Q4_K, 6);
    CpuBackend backend(*m, CpuBackendOptions{.num_threads = 2});
    backend.allocate_kv_cache(1, 16);
    std::vector<float> logits;
    backend.forward(test::single_request_batch({5, 16, 27, 38, 49, 60}, 0, 1, false), logits);
    ASSERT_EQ(logits.size(), 512u) << preset;
    for (const float x : logits) ASSERT_TRUE(std::isfinite(x)) << preset;
  }
}

// The memory check counts every expert: Qwen3-30B-A3B is its published 30.5B parameters.
TEST(DummyModel, WeightBytesCountEveryExpert) {
  const ModelConfig c = dummy_model_config("qwen3-30b-a3b");
  const int64_t attention = 2048LL * (4096 + 2 * 512) + 4096LL * 2048;
  const int64_t experts = 3LL * 128 * 768 * 2048;
  const int64_t matrices = 2LL * 151936 * 2048 + 48 * (attention + experts);
  const int64_t f32 = 48LL * (128 * 2048 + 2 * 2048 + 2 * 128) + 2048;  // router, norms
  EXPECT_EQ(dummy_model_weight_bytes(c, DType::BF16), static_cast<size_t>(matrices * 2 + f32 * 4));
  EXPECT_NEAR(static_cast<double>(matrices + f32), 30.5e9, 0.1e9);
  // --layers 8 keeps the embedding and eight layers' experts.
  const ModelConfig eight = dummy_model_config("qwen3-30b-a3b", 8);
  const int64_t matrices8 = 2LL * 151936 * 2048 + 8 * (attention + experts);
  const int64_t f32_8 = 8LL * (128 * 2048 + 2 * 2048 + 2 * 128) + 2048;
  EXPECT_EQ(dummy_model_weight_bytes(eight, DType::F16),
            static_cast<size_t>(matrices8 * 2 + f32_8 * 4));
  // gpt-oss's expert rows of 2880 values take 32-value blocks, not 256-value ones.
  EXPECT_NO_THROW(dummy_model_config("gpt-oss-20b"));
  EXPECT_THROW(make_dummy_model("gpt-oss-20b", DType::Q4_K, 0, 1), Error);
}

// A machine that cannot hold a preset's experts is told so before anything is allocated.
TEST(DummyModel, MoeWeightsTheMachineCannotHoldAreRefused) {
  const ModelConfig c = dummy_model_config("qwen3-30b-a3b");
  const size_t needed = dummy_model_weight_bytes(c, DType::F32);  // about 122 GB
  const size_t available = available_system_memory_bytes();
  if (available == 0 || available >= needed) GTEST_SKIP() << "this machine holds it";
  try {
    make_dummy_model("qwen3-30b-a3b", DType::F32);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("qwen3-30b-a3b"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr(std::to_string(needed >> 20) + " MiB"));
  }
}

}  // namespace
}  // namespace sluice
