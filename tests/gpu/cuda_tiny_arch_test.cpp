// The CUDA backend on every tiny-arch model (../shared/models/tiny-arch: Llama with GQA and with
// an explicit head_dim, Qwen3, Phi-3, Gemma 2, Gemma 3), as GGUF files and HF folders:
// - fp32 activations against llama.cpp's logits, in one batch and token by token (the decode
//   path, sliding windows past their width), with the CPU backend's tolerances
//   (tests/unit/backend/tiny_arch_forward_test.cpp);
// - bf16 (and fp16) activations against the CPU backend's logits, and greedy decoding that keeps
//   llama.cpp's ids wherever the margin leaves no doubt.
// Skips (never passes) without a CUDA device; runs in the emulator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/model/model.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/support/single_request_batch.h"
#include "tests/support/test_paths.h"
#include "tests/support/tiny_arch_reference.h"

namespace sluice {
namespace {

constexpr int kTinyArchBlockSize = 16;
constexpr int kNumBlocks = 8;  // 128 positions; the sequences have 62-64 tokens

struct Case {
  const char* name;
  const char* model_path;    // relative to ../shared
  const char* expected_dir;  // relative to ../shared
  // Max |logit - llama.cpp| with fp32 activations: tiny_arch_forward_test.cpp's, which the CPU
  // backend meets (llama.cpp's GELU goes through an fp16 table, so gemma agrees only to ~0.03).
  float tolerance;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.name;
}

const Case kFp32Cases[] = {
    {"llama_q_F32", "models/tiny-arch/llama-q/gguf/llama-q-F32.gguf",
     "models/tiny-arch/llama-q/expected/F32", 1e-3f},
    {"llama_q_hf", "models/tiny-arch/llama-q/hf", "models/tiny-arch/llama-q/expected/F32", 1e-3f},
    {"llama_headdim_F32", "models/tiny-arch/llama-headdim/gguf/llama-headdim-F32.gguf",
     "models/tiny-arch/llama-headdim/expected/F32", 1e-3f},
    {"llama_headdim_hf", "models/tiny-arch/llama-headdim/hf",
     "models/tiny-arch/llama-headdim/expected/F32", 1e-3f},
    {"qwen3_F32", "models/tiny-arch/qwen3/gguf/qwen3-F32.gguf",
     "models/tiny-arch/qwen3/expected/F32", 1e-3f},
    {"qwen3_hf", "models/tiny-arch/qwen3/hf", "models/tiny-arch/qwen3/expected/F32", 1e-3f},
    {"phi3_F32", "models/tiny-arch/phi3/gguf/phi3-F32.gguf", "models/tiny-arch/phi3/expected/F32",
     1e-3f},
    {"phi3_hf", "models/tiny-arch/phi3/hf", "models/tiny-arch/phi3/expected/F32", 1e-3f},
    {"gemma2_F32", "models/tiny-arch/gemma2/gguf/gemma2-F32.gguf",
     "models/tiny-arch/gemma2/expected/F32", 0.05f},
    {"gemma2_hf", "models/tiny-arch/gemma2/hf", "models/tiny-arch/gemma2/expected/F32", 0.05f},
    {"gemma3_F32", "models/tiny-arch/gemma3/gguf/gemma3-F32.gguf",
     "models/tiny-arch/gemma3/expected/F32", 0.05f},
    {"gemma3_hf", "models/tiny-arch/gemma3/hf", "models/tiny-arch/gemma3/expected/F32", 0.05f},
};

CudaBackendOptions options(ActivationDType dtype) {
  return CudaBackendOptions{.activation_dtype = dtype};
}

// Logits of every position of `tokens`, teacher-forced in one batch.
std::vector<float> one_batch_logits(Backend& backend, const std::vector<int32_t>& tokens) {
  backend.allocate_kv_cache(kNumBlocks, kTinyArchBlockSize);
  std::vector<float> logits;
  backend.forward(test::single_request_batch(tokens, 0, kNumBlocks, true), logits);
  return logits;
}

// The largest |a - b| over the rows of `vocab` logits.
float max_difference(const std::vector<float>& a, const std::vector<float>& b, int vocab) {
  float worst = 0.0f;
  for (size_t row = 0; row * static_cast<size_t>(vocab) < a.size(); ++row) {
    const size_t offset = row * static_cast<size_t>(vocab);
    worst = std::max(worst, test::max_row_difference(a.data() + offset, b.data() + offset, vocab));
  }
  return worst;
}

// The largest logit minus the second largest.
float top2_margin(const float* logits, int vocab) {
  float first = logits[0];
  float second = -INFINITY;
  for (int i = 1; i < vocab; ++i) {
    if (logits[i] > first) {
      second = first;
      first = logits[i];
    } else if (logits[i] > second) {
      second = logits[i];
    }
  }
  return first - second;
}

class CudaTinyArch : public ::testing::TestWithParam<Case> {};

TEST_P(CudaTinyArch, Fp32LogitsMatchLlamaCppInOneBatchAndTokenByToken) {
  SLUICE_REQUIRE_CUDA();
  const Case& c = GetParam();
  const auto ref = test::read_tiny_arch_reference(test::shared_path(c.expected_dir));
  const auto model = load_model(test::shared_path(c.model_path));
  const int vocab = model->config.vocab_size;
  CudaBackend backend(*model, options(ActivationDType::F32));
  const std::vector<float> logits = one_batch_logits(backend, ref.tokens);
  ASSERT_EQ(logits.size(), ref.logits.size());
  const float worst = max_difference(logits, ref.logits, vocab);
  EXPECT_LT(worst, c.tolerance) << c.name << " one batch";
  std::cout << "[ measured ] " << c.name << " fp32 one batch: max |logit - llama.cpp| = " << worst
            << "\n";

  // The prompt, then the rest one token at a time through the KV cache (decode steps).
  backend.allocate_kv_cache(kNumBlocks, kTinyArchBlockSize);
  const std::vector<int32_t> prompt(ref.tokens.begin(), ref.tokens.begin() + ref.n_prompt);
  std::vector<float> step_logits;
  backend.forward(test::single_request_batch(prompt, 0, kNumBlocks, false), step_logits);
  auto reference_row = [&](int t) { return ref.logits.data() + static_cast<size_t>(t) * vocab; };
  float worst_step =
      test::max_row_difference(step_logits.data(), reference_row(ref.n_prompt - 1), vocab);
  for (int t = ref.n_prompt; t < static_cast<int>(ref.tokens.size()); ++t) {
    backend.forward(
        test::single_request_batch({ref.tokens[static_cast<size_t>(t)]}, t, kNumBlocks, false),
        step_logits);
    worst_step =
        std::max(worst_step, test::max_row_difference(step_logits.data(), reference_row(t), vocab));
  }
  EXPECT_LT(worst_step, c.tolerance) << c.name << " token by token";
}

INSTANTIATE_TEST_SUITE_P(AllArchitectures, CudaTinyArch, ::testing::ValuesIn(kFp32Cases),
                         case_name);

// ---- bf16 and fp16 activations ---------------------------------------------------------------

// Against the CPU backend's fp32 logits on the same weights: the F32 GGUF files, whose weights
// are the HF folders' BF16 values, so converting them to bf16 (or fp16) on the device is exact
// and only the activations are rounded. bf16 keeps 8 significant bits (relative rounding up to
// 2^-9), and every stored activation is rounded, a few dozen times per layer; the errors reach
// the logits as noise of a few percent of the largest |logit| of the row. Measured on the
// emulator (max |diff| / max |logit| over the 62-64 positions): llama-q 2.0%, llama-headdim 1.3%,
// qwen3 2.4%, phi3 2.2%, gemma3 3.6%, gemma2 5.7% (post-FFN norm weights x10 and the final norm
// x4 in this fixture make its residual stream and logits peaky). The same runs in fp16 (11
// significant bits, 8x finer rounding) measure 0.17-0.94%, six to nine times less: rounding
// noise, not a wrong primitive, which moves logits by their own size (an unscaled embedding, a
// norm without its 1 + w, SiLU for GeGLU). The bounds below are about twice the bf16
// measurements (a GPU's products sum in another order, so its noise differs in detail), and a
// quarter of them for fp16.
struct ReducedCase {
  Case model;
  float bf16_tolerance;  // max |logit - cpu| / max |cpu logit| of each row
};

void PrintTo(const ReducedCase& c, std::ostream* os) {
  *os << c.model.name;
}

const ReducedCase kReducedCases[] = {
    {kFp32Cases[0], 0.04f},  {kFp32Cases[2], 0.03f}, {kFp32Cases[4], 0.05f},
    {kFp32Cases[6], 0.045f}, {kFp32Cases[8], 0.11f}, {kFp32Cases[10], 0.07f},
};

// Greedy decoding after the prompt: steps compared.
constexpr int kGreedySteps = 12;

// Runs the model with `dtype` activations on the reference sequence in one batch against the CPU
// backend, then greedy decoding after the prompt.
void check_reduced_precision(const Case& c, ActivationDType dtype, float tolerance) {
  const char* type_name = dtype == ActivationDType::BF16 ? "bf16" : "fp16";
  const auto ref = test::read_tiny_arch_reference(test::shared_path(c.expected_dir));
  const auto model = load_model(test::shared_path(c.model_path));
  const int vocab = model->config.vocab_size;
  std::vector<float> cpu_logits;
  {
    CpuBackend cpu(*model, CpuBackendOptions{.num_threads = 2});
    cpu_logits = one_batch_logits(cpu, ref.tokens);
  }
  CudaBackend gpu(*model, options(dtype));
  const std::vector<float> gpu_logits = one_batch_logits(gpu, ref.tokens);
  ASSERT_EQ(gpu_logits.size(), cpu_logits.size());
  float worst_relative = 0.0f;
  for (size_t t = 0; t < ref.tokens.size(); ++t) {
    const float* g = gpu_logits.data() + t * static_cast<size_t>(vocab);
    const float* r = cpu_logits.data() + t * static_cast<size_t>(vocab);
    float max_ref = 0.0f;
    for (int i = 0; i < vocab; ++i) max_ref = std::max(max_ref, std::fabs(r[i]));
    const float diff = test::max_row_difference(g, r, vocab);
    worst_relative = std::max(worst_relative, diff / max_ref);
    EXPECT_LE(diff, tolerance * max_ref) << c.name << " " << type_name << " position " << t;
  }
  std::cout << "[ measured ] " << c.name << " " << type_name
            << ": max |logit - cpu fp32| / max |logit| = " << worst_relative << "\n";

  // Greedy decoding on the GPU, one token at a time after the prompt: at every step where the
  // CPU's fp32 margin (top-1 minus top-2) is more than three times that row's measured error, no
  // rounding can flip the choice, and the GPU must pick llama.cpp's id. The reference token is
  // fed back either way (where the margin is thinner a flip is legitimate), so every step runs in
  // the reference's context and the CPU's teacher-forced rows stay the right reference.
  gpu.allocate_kv_cache(kNumBlocks, kTinyArchBlockSize);
  const std::vector<int32_t> prompt(ref.tokens.begin(), ref.tokens.begin() + ref.n_prompt);
  std::vector<float> step_logits;
  gpu.forward(test::single_request_batch(prompt, 0, kNumBlocks, false), step_logits);
  int num_checked = 0;
  for (int step = 0; step < kGreedySteps; ++step) {
    const int row = ref.n_prompt - 1 + step;
    const float* r = cpu_logits.data() + static_cast<size_t>(row) * vocab;
    const float error =
        test::max_row_difference(gpu_logits.data() + static_cast<size_t>(row) * vocab, r, vocab);
    const int32_t next = ref.tokens[static_cast<size_t>(row) + 1];
    if (top2_margin(r, vocab) > 3.0f * error) {
      EXPECT_EQ(test::argmax(step_logits.data(), vocab), next)
          << c.name << " " << type_name << " greedy step " << step;
      ++num_checked;
    }
    gpu.forward(test::single_request_batch({next}, row + 1, kNumBlocks, false), step_logits);
  }
  std::cout << "[ measured ] " << c.name << " " << type_name << " greedy: " << num_checked << " of "
            << kGreedySteps << " steps with a margin past the error\n";
  EXPECT_GE(num_checked, kGreedySteps / 3) << c.name << " " << type_name;
}

class CudaTinyArchReduced : public ::testing::TestWithParam<ReducedCase> {};

TEST_P(CudaTinyArchReduced, Bf16LogitsFollowTheCpuBackendAndGreedyKeepsLlamaCppIds) {
  SLUICE_REQUIRE_CUDA();
  check_reduced_precision(GetParam().model, ActivationDType::BF16, GetParam().bf16_tolerance);
}

TEST_P(CudaTinyArchReduced, Fp16LogitsFollowTheCpuBackendAndGreedyKeepsLlamaCppIds) {
  SLUICE_REQUIRE_CUDA();
  check_reduced_precision(GetParam().model, ActivationDType::F16, GetParam().bf16_tolerance / 4);
}

std::string reduced_case_name(const ::testing::TestParamInfo<ReducedCase>& info) {
  return info.param.model.name;
}

INSTANTIATE_TEST_SUITE_P(OnePerArchitecture, CudaTinyArchReduced,
                         ::testing::ValuesIn(kReducedCases), reduced_case_name);

}  // namespace
}  // namespace sluice
