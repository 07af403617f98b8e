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

}  // namespace
}  // namespace sluice
