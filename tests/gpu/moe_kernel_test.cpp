// The mixture-of-experts kernels (kernels/moe.cuh) against the CPU backend's cpu_moe:
// moe_choose_experts against choose_experts on random router logits with many ties (the same
// ids, in the same order; weights within 1e-6 relative), in every gating rule, and moe_combine
// against a top-k-ordered fp32 sum.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_moe.h"
#include "kernels/moe.cuh"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/kernel_test_support.h"

namespace sluice::moe_kernel_test {
namespace {

using namespace kernel_test;

// Logits on a grid of 0.25 in [-4, 4]: with 32+ experts most tokens have tied logits, and the
// ties must go to the lower id in both.
std::vector<float> tied_logits(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> step(-16, 16);
  std::vector<float> out(n);
  for (float& x : out) x = 0.25f * static_cast<float>(step(rng));
  return out;
}

TEST(MoeKernels, DeviceTopKMatchesChooseExpertsWithTies) {
  SLUICE_REQUIRE_CUDA();
  struct Gating {
    MoeGating cpu;
    kernels::MoeGatingKind device;
    bool renormalize;
  };
  const Gating gatings[] = {
      {MoeGating::SoftmaxTopK, kernels::MoeGatingKind::SoftmaxTopK, true},
      {MoeGating::SoftmaxTopK, kernels::MoeGatingKind::SoftmaxTopK, false},
      {MoeGating::TopKSoftmax, kernels::MoeGatingKind::TopKSoftmax, false},
  };
  const int num_tokens = 37;
  uint32_t seed = 1;
  for (const Gating& g : gatings) {
    for (const int num_experts : {4, 8, 32, 128}) {
      for (const int top_k : {1, 2, 4, 8}) {
        if (top_k > num_experts) continue;
        const std::string what = "experts " + std::to_string(num_experts) + ", top " +
                                 std::to_string(top_k) + ", gating " +
                                 std::to_string(static_cast<int>(g.device)) +
                                 (g.renormalize ? " renormalised" : "");
        SCOPED_TRACE(what);
        const std::vector<float> logits =
            tied_logits(static_cast<size_t>(num_tokens) * num_experts, ++seed);
        ExpertChoice expected;
        const MoeOptions options{.num_experts = num_experts,
                                 .top_k = top_k,
                                 .gating = g.cpu,
                                 .renormalize = g.renormalize};
        choose_experts(logits.data(), num_tokens, options, expected);

        DeviceBuffer<float> d_logits(logits);
        DeviceBuffer<int32_t> d_ids(static_cast<size_t>(num_tokens) * top_k);
        DeviceBuffer<float> d_weights(static_cast<size_t>(num_tokens) * top_k);
        expect_ok(kernels::moe_choose_experts(d_logits.get(), d_ids.get(), d_weights.get(),
                                              num_tokens, num_experts, top_k, g.device,
                                              g.renormalize, nullptr));
        const std::vector<int32_t> ids = d_ids.download();
        const std::vector<float> weights = d_weights.download();
        for (size_t i = 0; i < ids.size(); ++i) {
          ASSERT_EQ(ids[i], expected.ids[i]) << "token " << i / top_k << " rank " << i % top_k;
          EXPECT_NEAR(weights[i], expected.weights[i], 1e-6f * std::fabs(expected.weights[i]))
              << "token " << i / top_k << " rank " << i % top_k;
        }
      }
    }
  }
  // Counts the kernel cannot take are refused.
  DeviceBuffer<float> d(64);
  DeviceBuffer<int32_t> ids(64);
  EXPECT_NE(kernels::moe_choose_experts(d.get(), ids.get(), d.get(), 1, 4, 5,
                                        kernels::MoeGatingKind::SoftmaxTopK, true, nullptr),
            kernels::kKernelOk);
}

template <typename T>
void check_combine() {
  const int num_tokens = 13, top_k = 3, hidden = 70;
  const int num_rows = num_tokens * top_k;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::vector<float> expert_out(static_cast<size_t>(num_rows) * hidden), weights(num_rows);
  for (float& x : expert_out) x = uniform(rng);
  for (float& w : weights) w = uniform(rng);
  std::vector<int32_t> row_of_slot(static_cast<size_t>(num_rows));
  for (int i = 0; i < num_rows; ++i) row_of_slot[static_cast<size_t>(i)] = (i * 7) % num_rows;
  std::vector<float> expected(static_cast<size_t>(num_tokens) * hidden);
  for (int t = 0; t < num_tokens; ++t) {
    for (int c = 0; c < hidden; ++c) {
      float sum = 0.0f;
      for (int j = 0; j < top_k; ++j) {
        const int slot = t * top_k + j;
        sum += weights[static_cast<size_t>(slot)] *
               expert_out[static_cast<size_t>(row_of_slot[static_cast<size_t>(slot)]) * hidden + c];
      }
      expected[static_cast<size_t>(t) * hidden + c] = sum;
    }
  }
  DeviceBuffer<float> d_out_rows(expert_out), d_weights(weights);
  DeviceBuffer<int32_t> d_rows(row_of_slot);
  DeviceBuffer<Storage<T>> d_out(static_cast<size_t>(num_tokens) * hidden);
  expect_ok(kernels::moe_combine<T>(d_out_rows.get(), d_rows.get(), d_weights.get(),
                                    device_ptr<T>(d_out), num_tokens, top_k, hidden, nullptr));
  expect_close(to_floats<T>(d_out.download()), expected, ElementTraits<T>::kTolerance,
               "moe_combine");
}

TEST(MoeKernels, CombineAddsTheWeightedSlotsOfEachToken) {
  SLUICE_REQUIRE_CUDA();
  check_combine<float>();
  check_combine<__nv_bfloat16>();
  check_combine<__half>();
}

}  // namespace
}  // namespace sluice::moe_kernel_test
