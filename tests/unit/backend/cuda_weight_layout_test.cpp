// The CUDA backend's weight layout without a GPU (engine/backend/cuda/cuda_weight_layout.h):
// quantized matrices keep their file bytes, float ones take the activation type's, and a stack
// whose parts differ in type (llama-quantize's Q4_K_M stores some v projections in Q6_K) becomes
// runs of one type each, in row order.
#include "engine/backend/cuda/cuda_weight_layout.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/core/dtype.h"
#include "engine/model/model.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

const std::string kLlamaQGguf = "models/tiny-arch/llama-q/gguf/llama-q-";

// The bytes of every matrix of the model as its file stores them, and their element count.
void matrix_totals(const ModelWeights& w, size_t* bytes, size_t* elements) {
  *bytes = 0;
  *elements = 0;
  const auto add = [&](const WeightTensor& t) {
    *bytes += t.num_bytes;
    *elements += static_cast<size_t>(t.num_elements());
  };
  add(w.token_embedding);
  if (w.lm_head.data != w.token_embedding.data) add(w.lm_head);
  for (const LayerWeights& l : w.layers) {
    for (const WeightRole role : all_weight_roles()) {
      if (is_layer_role(role) && weight_kind(role) == WeightKind::Matrix && !l[role].empty())
        add(l[role]);
    }
  }
}

// Norms, biases and RoPE tables in fp32, each tensor rounded up to 256 bytes: an upper bound of
// what is not a matrix, plus the matrices' own rounding.
size_t non_matrix_bound(const ModelWeights& w, const ModelConfig& c) {
  size_t bytes = 256 * (3 + w.layers.size() * kNumLayerWeightRoles);
  bytes += static_cast<size_t>(c.hidden_size) * 4 * (1 + 4 * w.layers.size());
  return bytes + static_cast<size_t>(c.rope_dims()) * 2 * static_cast<size_t>(c.num_layers);
}

TEST(CudaWeightLayout, QuantizedMatricesTakeTheirFileBytes) {
  for (const std::string type : {"Q4_K_M", "Q8_0", "Q2_K"}) {
    SCOPED_TRACE(type);
    const auto model = load_model(test::shared_path(kLlamaQGguf + type + ".gguf"));
    size_t file_bytes = 0, elements = 0;
    matrix_totals(model->weights, &file_bytes, &elements);
    const size_t device = cuda_weight_bytes(model->weights, model->config, 2);
    EXPECT_GE(device, file_bytes);
    EXPECT_LE(device, file_bytes + non_matrix_bound(model->weights, model->config));
    // Widened to bf16 the same matrices would take 2 bytes each: far more.
    EXPECT_LT(device, elements * 2 * 2 / 3);
  }
}

TEST(CudaWeightLayout, FloatMatricesTakeTheActivationType) {
  const auto model = load_model(test::shared_path(kLlamaQGguf + "F32.gguf"));
  size_t file_bytes = 0, elements = 0;
  matrix_totals(model->weights, &file_bytes, &elements);
  EXPECT_EQ(file_bytes, elements * 4);
  for (const size_t element_bytes : {size_t{2}, size_t{4}}) {
    const size_t device = cuda_weight_bytes(model->weights, model->config, element_bytes);
    EXPECT_GE(device, elements * element_bytes);
    EXPECT_LE(device, elements * element_bytes + non_matrix_bound(model->weights, model->config));
  }
}

// Mixture of experts: the experts' device bytes are their file bytes when quantized (gate|up and
// down per expert, each 256-byte aligned), the router is fp32 whatever its type, and offloading
// the experts of the first N layers (--n-cpu-moe) takes exactly their bytes off the device while
// the host keeps their file bytes.
TEST(CudaWeightLayout, ExpertsCountOnTheDeviceOnlyWhenNotOffloaded) {
  for (const std::string path : {"models/tiny-arch/mixtral/gguf/mixtral-Q4_K_M.gguf",
                                 "models/tiny-arch/qwen3moe/gguf/qwen3moe-Q8_0.gguf",
                                 "models/tiny-arch/gpt-oss/gguf/gpt-oss-MXFP4.gguf"}) {
    SCOPED_TRACE(path);
    const auto model = load_model(test::shared_path(path));
    const ModelWeights& w = model->weights;
    const int num_layers = model->config.num_layers;
    ASSERT_EQ(w.experts.size(), static_cast<size_t>(num_layers));
    size_t expert_file_bytes = 0;
    for (const WeightRole role : {WeightRole::GateExps, WeightRole::UpExps, WeightRole::DownExps}) {
      for (const WeightTensor& t : w.experts[0][role]) expert_file_bytes += t.num_bytes;
    }
    const size_t layer0 = cuda_expert_bytes(w.experts[0], 2);
    const size_t num_experts = w.experts[0][WeightRole::GateExps].size();
    EXPECT_GE(layer0, expert_file_bytes);
    EXPECT_LE(layer0, expert_file_bytes + num_experts * 4 * 256 +
                          num_experts * 4 *
                              static_cast<size_t>(model->config.hidden_size +
                                                  2 * model->config.expert_intermediate_size));
    const size_t all_on_device = cuda_weight_bytes(w, model->config, 2);
    EXPECT_EQ(all_on_device - cuda_weight_bytes(w, model->config, 2, 1), layer0);
    size_t every_layer = 0;
    for (const LayerExperts& e : w.experts) every_layer += cuda_expert_bytes(e, 2);
    EXPECT_EQ(all_on_device - cuda_weight_bytes(w, model->config, 2, num_layers), every_layer);
    // More layers than the model has: every layer (--cpu-moe).
    EXPECT_EQ(cuda_weight_bytes(w, model->config, 2, 1 << 20),
              cuda_weight_bytes(w, model->config, 2, num_layers));
    EXPECT_EQ(cuda_host_expert_bytes(w, 0), 0u);
    EXPECT_GE(cuda_host_expert_bytes(w, 1), expert_file_bytes);
    // The router in fp32: [num_experts, hidden] floats.
    const CudaPlacement router{WeightRole::Router, {&w.layers[0][WeightRole::Router]}};
    EXPECT_EQ(cuda_placement_bytes(router, 2),
              (num_experts * static_cast<size_t>(model->config.hidden_size) * 4 + 255) / 256 * 256);
  }
}

TEST(CudaWeightLayout, AStackOfTwoTypesIsTwoRunsInRowOrder) {
  const auto model = load_model(test::shared_path(kLlamaQGguf + "Q4_K_M.gguf"));
  const LayerWeights& l = model->weights.layers[1];
  ASSERT_EQ(l[WeightRole::Wq].dtype, DType::Q4_K);
  ASSERT_EQ(l[WeightRole::Wv].dtype, DType::Q6_K) << "the fixture's README: blk.1.attn_v is Q6_K";
  const WeightTensor* qkv[] = {&l[WeightRole::Wq], &l[WeightRole::Wk], &l[WeightRole::Wv]};
  const auto runs = cuda_matrix_runs(qkv);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_TRUE(runs[0].is_quantized);
  EXPECT_EQ(runs[0].stored, DType::Q4_K);
  EXPECT_EQ(runs[0].rows, l[WeightRole::Wq].rows() + l[WeightRole::Wk].rows());
  EXPECT_EQ(runs[1].stored, DType::Q6_K);
  EXPECT_EQ(runs[1].rows, l[WeightRole::Wv].rows());
  EXPECT_EQ(cuda_run_row_bytes(runs[1], 2), dtype_num_bytes(DType::Q6_K, l[WeightRole::Wv].cols()));
  EXPECT_EQ(cuda_run_bytes(runs[0], 2) % 256, 0u);

  // Float parts of different stored types share one run in the activation type.
  WeightTensor f16 = l[WeightRole::Wq], f32 = l[WeightRole::Wk];
  f16.dtype = DType::F16;
  f32.dtype = DType::F32;
  const WeightTensor* floats[] = {&f16, &f32};
  const auto float_runs = cuda_matrix_runs(floats);
  ASSERT_EQ(float_runs.size(), 1u);
  EXPECT_FALSE(float_runs[0].is_quantized);
  EXPECT_EQ(cuda_run_row_bytes(float_runs[0], 2), static_cast<size_t>(f16.cols()) * 2);
}

// What the device cannot run is named before anything is uploaded; every model the table knows
// runs there today.
TEST(CudaWeightLayout, UnsupportedFeaturesAreNamed) {
  ModelConfig c = dummy_model_config("tiny-gpt-oss");
  EXPECT_EQ(cuda_unsupported_features(c), "");
  c.num_experts = 2048;
  EXPECT_EQ(cuda_unsupported_features(c), "2048 experts a layer (the device's top-k takes 1024)");
}

}  // namespace
}  // namespace sluice
