// The CUDA backend against the CPU backend on models of published shapes with random weights
// (engine/model/dummy_model.h), over three steps of two requests (prefill, a padded decode
// bucket, a mixed step), in fp32 and bf16:
// - CudaOneLayerVsCpu: one layer of 7-12B shapes of every architecture (their vocabularies'
//   embedding and LM head need gigabytes: GPU only, filtered out in the emulator);
// - CudaTinyShapeVsCpu: the small test shapes of every architecture with all their layers (Gemma
//   3's local and global RoPE bases, Gemma 2's alternating windows), partial rotary and LongRoPE
//   (Phi-3), which the tiny-arch fixtures do not have; they run in the emulator;
// - CudaWeightsRope: the RoPE tables uploaded once per distinct set of frequencies;
// - CudaWeightsByRole: a layer's weights on the device by role (q|k|v and gate|up stacked under
//   their fused roles), and a role the layer lacks is an error naming it, never another's weights.
// Every test skips (never passes) without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_buffer.h"
#include "engine/backend/cuda/cuda_weights.h"
#include "engine/core/error.h"
#include "engine/model/dummy_model.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/support/float_compare.h"

namespace sluice {
namespace {

constexpr int kShapesBlockSize = 16;

// Three steps over two requests: both prefill (9 and 5 tokens), both decode (a padded decode
// bucket), then a 3-token chunk of A beside a decode of B (a mixed step). Returns each step's
// logits.
std::vector<std::vector<float>> run_three_steps(Backend& backend, int vocab) {
  backend.allocate_kv_cache(8, kShapesBlockSize);
  auto token = [vocab](int i) { return static_cast<int32_t>((i * 7919 + 13) % vocab); };
  std::vector<std::vector<float>> out(3);
  BatchInputs prefill;
  for (int i = 0; i < 9; ++i) {
    prefill.token_ids.push_back(token(i));
    prefill.positions.push_back(i);
    prefill.slot_mapping.push_back(i);  // A: blocks 0, 1
  }
  for (int i = 0; i < 5; ++i) {
    prefill.token_ids.push_back(token(100 + i));
    prefill.positions.push_back(i);
    prefill.slot_mapping.push_back(2 * kShapesBlockSize + i);  // B: block 2
  }
  prefill.query_start_loc = {0, 9, 14};
  prefill.seq_lens = {9, 5};
  prefill.max_blocks_per_request = 2;
  prefill.block_tables = {0, 1, 2, -1};
  prefill.logits_indices = {8, 13};
  backend.forward(prefill, out[0]);

  BatchInputs decode = prefill;
  decode.token_ids = {token(9), token(105)};
  decode.positions = {9, 5};
  decode.slot_mapping = {9, 2 * kShapesBlockSize + 5};
  decode.query_start_loc = {0, 1, 2};
  decode.seq_lens = {10, 6};
  decode.logits_indices = {0, 1};
  backend.forward(decode, out[1]);

  BatchInputs mixed = decode;
  mixed.token_ids = {token(10), token(11), token(12), token(106)};
  mixed.positions = {10, 11, 12, 6};
  mixed.slot_mapping = {10, 11, 12, 2 * kShapesBlockSize + 6};
  mixed.query_start_loc = {0, 3, 4};
  mixed.seq_lens = {13, 7};
  mixed.logits_indices = {2, 3};
  backend.forward(mixed, out[2]);
  return out;
}

// Phi-3's LongRoPE (the 128k models): per-pair divisors of the frequencies, the long ones since
// the context (256) is past original_max_position_embeddings, and an attention factor. The
// factors are made up, large enough to move every rotated pair.
void use_long_rope(ModelConfig& c) {
  RopeScaling s;
  s.type = RopeScaling::Type::LongRope;
  s.original_max_position_embeddings = 64;
  s.attention_factor = 1.19f;
  for (int i = 0; i < c.rope_dims() / 2; ++i) {
    s.short_factor.push_back(1.0f + 0.25f * static_cast<float>(i));
    s.long_factor.push_back(1.5f + 2.0f * static_cast<float>(i));
  }
  c.rope_scaling = s;
  for (LayerConfig& layer : c.layers) layer.rope_scaling = s;
}

struct ShapeCase {
  std::string preset;
  DType weights;
  ActivationDType activations;
  void (*adjust)(ModelConfig&) = nullptr;  // changes the preset's configuration
  const char* variant = "";                // names the adjustment
};

void PrintTo(const ShapeCase& c, std::ostream* os) {
  *os << c.preset << c.variant;
}

std::string shape_case_name(const ::testing::TestParamInfo<ShapeCase>& info) {
  const ShapeCase& c = info.param;
  std::string name =
      c.preset + c.variant + (c.activations == ActivationDType::F32 ? "_fp32" : "_bf16");
  std::replace(name.begin(), name.end(), '-', '_');
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

// Runs the three steps on the CPU and CUDA backends and compares the logits: fp32 within 1e-3
// absolute + 1e-3 relative per logit, bf16 within 2e-2 of the row's largest |logit|.
void check_against_cpu(const ShapeCase& c, int num_layers) {
  const auto model = make_dummy_model(c.preset, c.weights, /*seed=*/7, num_layers);
  if (c.adjust != nullptr) c.adjust(model->config);
  const int vocab = model->config.vocab_size;
  std::vector<std::vector<float>> cpu_logits;
  {
    CpuBackend cpu(*model, CpuBackendOptions{});
    cpu_logits = run_three_steps(cpu, vocab);
  }
  CudaBackend gpu(*model, CudaBackendOptions{.activation_dtype = c.activations});
  const auto gpu_logits = run_three_steps(gpu, vocab);
  const bool is_fp32 = c.activations == ActivationDType::F32;
  for (size_t step = 0; step < 3; ++step) {
    ASSERT_EQ(gpu_logits[step].size(), cpu_logits[step].size());
    for (size_t row = 0; row < 2; ++row) {
      const float* g = gpu_logits[step].data() + row * static_cast<size_t>(vocab);
      const float* r = cpu_logits[step].data() + row * static_cast<size_t>(vocab);
      float max_ref = 0.0f;
      float max_diff = 0.0f;
      int num_outside = 0;
      for (int i = 0; i < vocab; ++i) {
        const float diff = std::fabs(g[i] - r[i]);
        max_ref = std::max(max_ref, std::fabs(r[i]));
        max_diff = test::nan_max(max_diff, diff);
        if (is_fp32 && !(diff <= 1e-3f + 1e-3f * std::fabs(r[i]))) ++num_outside;
      }
      if (is_fp32) {
        EXPECT_EQ(num_outside, 0) << c.preset << c.variant << " step " << step << " row " << row
                                  << " max |diff| " << max_diff;
      } else {
        EXPECT_LE(max_diff, 2e-2f * max_ref) << c.preset << c.variant << " step " << step << " row "
                                             << row << " max |ref| " << max_ref;
      }
    }
  }
}

class CudaOneLayerVsCpu : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(CudaOneLayerVsCpu, LogitsAgreeWithCpuBackend) {
  SLUICE_REQUIRE_CUDA();
  check_against_cpu(GetParam(), /*num_layers=*/1);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudaOneLayerVsCpu,
    ::testing::Values(ShapeCase{"llama-3-8b", DType::F32, ActivationDType::F32},
                      ShapeCase{"qwen2.5-7b", DType::F32, ActivationDType::F32},
                      ShapeCase{"mistral-7b", DType::F32, ActivationDType::F32},
                      ShapeCase{"qwen3-8b", DType::F32, ActivationDType::F32},
                      ShapeCase{"gemma-2-9b", DType::F32, ActivationDType::F32},
                      ShapeCase{"gemma-3-12b", DType::F32, ActivationDType::F32},
                      ShapeCase{"phi-3-mini", DType::F32, ActivationDType::F32},
                      ShapeCase{"llama-3-8b", DType::BF16, ActivationDType::BF16},
                      ShapeCase{"qwen2.5-7b", DType::BF16, ActivationDType::BF16},
                      ShapeCase{"mistral-7b", DType::BF16, ActivationDType::BF16},
                      ShapeCase{"qwen3-8b", DType::BF16, ActivationDType::BF16},
                      ShapeCase{"gemma-2-9b", DType::BF16, ActivationDType::BF16},
                      ShapeCase{"gemma-3-12b", DType::BF16, ActivationDType::BF16},
                      ShapeCase{"phi-3-mini", DType::BF16, ActivationDType::BF16}),
    shape_case_name);

class CudaTinyShapeVsCpu : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(CudaTinyShapeVsCpu, LogitsAgreeWithCpuBackend) {
  SLUICE_REQUIRE_CUDA();
  check_against_cpu(GetParam(), /*num_layers=*/0);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudaTinyShapeVsCpu,
    ::testing::Values(
        ShapeCase{"tiny-qwen3", DType::F32, ActivationDType::F32},
        ShapeCase{"tiny-gemma2", DType::F32, ActivationDType::F32},
        ShapeCase{"tiny-gemma3", DType::F32, ActivationDType::F32},
        ShapeCase{"tiny-phi3", DType::F32, ActivationDType::F32},
        ShapeCase{"tiny-phi3", DType::F32, ActivationDType::F32, use_long_rope, "-longrope"},
        ShapeCase{"tiny-gemma3", DType::BF16, ActivationDType::BF16},
        ShapeCase{"tiny-phi3", DType::BF16, ActivationDType::BF16, use_long_rope, "-longrope"}),
    shape_case_name);

// One RoPE table per distinct set of frequencies, shared by the layers that use it: Gemma 3's
// five local layers share one and its global layer has its own; every layer of a Llama or a
// LongRoPE Phi-3 shares one.
TEST(CudaWeightsRope, OneTablePerDistinctFrequencies) {
  SLUICE_REQUIRE_CUDA();
  CudaStream stream;
  {
    const auto gemma3 = make_dummy_model("tiny-gemma3");
    const CudaWeights w(gemma3->weights, gemma3->config, ActivationDType::F32, stream.get());
    EXPECT_EQ(w.num_rope_tables(), 2);
    for (int l = 1; l < 5; ++l) EXPECT_EQ(w.layer(l).rope_inv_freq, w.layer(0).rope_inv_freq) << l;
    EXPECT_NE(w.layer(5).rope_inv_freq, w.layer(0).rope_inv_freq);
  }
  for (const char* preset : {"tiny-llama", "tiny-phi3"}) {
    const auto model = make_dummy_model(preset);
    if (std::string(preset) == "tiny-phi3") use_long_rope(model->config);
    const CudaWeights w(model->weights, model->config, ActivationDType::F32, stream.get());
    EXPECT_EQ(w.num_rope_tables(), 1) << preset;
    EXPECT_EQ(w.layer(1).rope_inv_freq, w.layer(0).rope_inv_freq) << preset;
  }
}

TEST(CudaWeightsByRole, StackedUnderTheirFusedRolesAndLookedUpByRole) {
  SLUICE_REQUIRE_CUDA();
  CudaStream stream;
  const auto qwen2 = make_dummy_model("tiny-qwen2");
  const ModelConfig& c = qwen2->config;
  const CudaWeights w(qwen2->weights, c, ActivationDType::F32, stream.get());
  const CudaMatrix& qkv = w.matrix({WeightRole::Wqkv, 1});
  EXPECT_EQ(qkv.rows, c.q_size() + 2 * c.kv_size());
  EXPECT_EQ(qkv.cols, c.hidden_size);
  EXPECT_EQ(w.matrix({WeightRole::GateUp, 1}).rows, 2 * c.intermediate_size);
  EXPECT_EQ(w.matrix({WeightRole::Down, 1}).cols, c.intermediate_size);
  EXPECT_NE(w.vector({WeightRole::Bq, 1}), nullptr);  // the q|k|v biases, stacked
  EXPECT_NE(w.vector({WeightRole::FfnNorm, 1}), nullptr);
  for (const WeightRole stacked : {WeightRole::Wq, WeightRole::Up}) {
    EXPECT_THROW(w.matrix({stacked, 1}), Error) << weight_role_name(stacked);
  }
  EXPECT_THROW(w.vector({WeightRole::Bk, 1}), Error);
  EXPECT_THROW(w.vector({WeightRole::QNorm, 1}), Error);  // qwen2 has no q/k norms
  EXPECT_THROW(w.matrix({WeightRole::AttnNorm, 1}), Error);
  EXPECT_THROW(w.matrix({WeightRole::LmHead, 1}), Error);
}

TEST(CudaWeightsByRole, AMatrixTheLayerLacksIsAnErrorNamingIt) {
  SLUICE_REQUIRE_CUDA();
  const auto model = make_dummy_model("tiny-llama");
  model->weights.layers[1][WeightRole::Down] = WeightTensor{};
  CudaBackend backend(*model, CudaBackendOptions{.activation_dtype = ActivationDType::F32});
  try {
    run_three_steps(backend, model->config.vocab_size);
    ADD_FAILURE() << "a layer without ffn_down ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ffn_down in layer 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice
