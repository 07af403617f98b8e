// The CUDA backend (fp32 activations) on the tiny-arch models it runs, against llama.cpp's
// logits (../shared/models/tiny-arch), and a clear refusal naming what is missing for the ones it
// does not run yet. Skips (never passes) without a CUDA device; runs in the emulator.
#include <gtest/gtest.h>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/core/error.h"
#include "engine/model/model.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/support/single_request_batch.h"
#include "tests/support/test_paths.h"
#include "tests/support/tiny_arch_reference.h"

namespace sluice {
namespace {

constexpr int kBlockSize = 16;
constexpr int kNumBlocks = 8;

struct Case {
  const char* name;
  const char* model_path;
  const char* expected_dir;
};

const Case kRunnable[] = {
    {"phi3_F32", "models/tiny-arch/phi3/gguf/phi3-F32.gguf", "models/tiny-arch/phi3/expected/F32"},
    {"phi3_hf", "models/tiny-arch/phi3/hf", "models/tiny-arch/phi3/expected/F32"},
    {"llama_headdim_F32", "models/tiny-arch/llama-headdim/gguf/llama-headdim-F32.gguf",
     "models/tiny-arch/llama-headdim/expected/F32"},
    {"llama_q_F32", "models/tiny-arch/llama-q/gguf/llama-q-F32.gguf",
     "models/tiny-arch/llama-q/expected/F32"},
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class CudaTinyArch : public ::testing::TestWithParam<Case> {};

TEST_P(CudaTinyArch, Fp32LogitsMatchLlamaCpp) {
  SLUICE_REQUIRE_CUDA();
  const Case& c = GetParam();
  const auto ref = test::read_tiny_arch_reference(test::shared_path(c.expected_dir));
  const auto model = load_model(test::shared_path(c.model_path));
  const int vocab = model->config.vocab_size;
  CudaBackend backend(*model, CudaBackendOptions{.activation_dtype = ActivationDType::F32});
  backend.allocate_kv_cache(kNumBlocks, kBlockSize);
  std::vector<float> logits;
  backend.forward(test::single_request_batch(ref.tokens, 0, kNumBlocks, true), logits);
  ASSERT_EQ(logits.size(), ref.logits.size());
  float worst = 0.0f;
  for (size_t t = 0; t < ref.tokens.size(); ++t) {
    worst = std::max(worst, test::max_row_difference(logits.data() + t * vocab,
                                                     ref.logits.data() + t * vocab, vocab));
  }
  // fp32 activations and TF32-free fp32 products: llama.cpp's F32 agreement with exact math
  // (~6e-5) plus fp32 rounding of a different summation order.
  EXPECT_LT(worst, 1e-3f) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Runnable, CudaTinyArch, ::testing::ValuesIn(kRunnable),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(CudaTinyArchRefusal, ModelsNeedingMissingPrimitivesAreRefusedByName) {
  SLUICE_REQUIRE_CUDA();
  const auto model = load_model(test::shared_path("models/tiny-arch/gemma2/gguf/gemma2-F32.gguf"));
  try {
    CudaBackend backend(*model, CudaBackendOptions{});
    FAIL() << "gemma2 ran on the CUDA backend";
  } catch (const sluice::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("gemma2-F32.gguf"), std::string::npos) << what;
    EXPECT_NE(what.find("GeGLU"), std::string::npos) << what;
    EXPECT_NE(what.find("--device cpu"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace sluice
