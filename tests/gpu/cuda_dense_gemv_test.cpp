// The GEMV for float matrices (dense_gemv_choice.h): with it asked for, products of 1-8 tokens
// of the weights in the activation type go through kernels/quant_linear.cuh instead of cuBLAS,
// and the logits follow the cuBLAS path's: prefill of 8 tokens and decode token by token (GEMV),
// then a 20-token prefill (cuBLAS either way), in fp32 and bf16 activations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/model/model.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/support/float_compare.h"
#include "tests/support/single_request_batch.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

constexpr int kGemvBlockSize = 16;

// The logits of 8 prompt tokens in one step, then of 4 decode steps of one token, then of a
// fresh 20-token prefill.
std::vector<float> gemv_run(const Model& model, ActivationDType dtype, bool dense_gemv) {
  CudaBackend backend(model,
                      CudaBackendOptions{.activation_dtype = dtype, .dense_gemv = dense_gemv});
  EXPECT_NE(backend.describe().find(dense_gemv ? "by GEMV (asked for)" : "by cuBLAS (asked for)"),
            std::string::npos)
      << backend.describe();
  backend.allocate_kv_cache(8, kGemvBlockSize);
  std::vector<int32_t> tokens;
  for (int i = 0; i < 24; ++i) tokens.push_back((i * 37 + 11) % model.config.vocab_size);
  std::vector<float> all, step;
  const std::vector<int32_t> prompt(tokens.begin(), tokens.begin() + 8);
  backend.forward(test::single_request_batch(prompt, 0, 4, /*all_logits=*/true), step);
  all.insert(all.end(), step.begin(), step.end());
  for (int pos = 8; pos < 12; ++pos) {
    backend.forward(test::single_request_batch({tokens[static_cast<size_t>(pos)]}, pos, 4, false),
                    step);
    all.insert(all.end(), step.begin(), step.end());
  }
  const std::vector<int32_t> long_prompt(tokens.begin(), tokens.begin() + 20);
  backend.forward(test::single_request_batch(long_prompt, 0, 4, false), step);
  all.insert(all.end(), step.begin(), step.end());
  return all;
}

TEST(CudaDenseGemv, FollowsTheCublasPath) {
  SLUICE_REQUIRE_CUDA();
  for (const std::string type : {"F32", "F16"}) {
    const auto model =
        load_model(test::shared_path("models/tiny-arch/llama-q/gguf/llama-q-" + type + ".gguf"));
    const int vocab = model->config.vocab_size;
    for (const ActivationDType dtype : {ActivationDType::F32, ActivationDType::BF16}) {
      SCOPED_TRACE(type + " weights, " + std::string(activation_dtype_name(dtype)));
      const std::vector<float> cublas = gemv_run(*model, dtype, false);
      const std::vector<float> gemv = gemv_run(*model, dtype, true);
      ASSERT_EQ(cublas.size(), gemv.size());
      // fp32: summation order only; bf16: every rounded activation may differ once the products
      // do, so 4% of the row's largest |logit| as the bf16 bounds of cuda_tiny_arch_test.cpp.
      const float tolerance = dtype == ActivationDType::F32 ? 1e-4f : 0.04f;
      for (size_t row = 0; row * vocab < cublas.size(); ++row) {
        float max_ref = 0.0f, diff = 0.0f;
        for (int i = 0; i < vocab; ++i) {
          const size_t at = row * static_cast<size_t>(vocab) + static_cast<size_t>(i);
          max_ref = std::max(max_ref, std::fabs(cublas[at]));
          diff = test::nan_max(diff, std::fabs(gemv[at] - cublas[at]));
        }
        EXPECT_LE(diff, tolerance * max_ref) << "logits row " << row;
      }
    }
  }
}

}  // namespace
}  // namespace sluice
