// Log-probabilities on the device (kernels/logprobs.cuh) against the host's token_logprobs
// (engine/sched/token_logprobs.h, what the engine reports when it samples on the host): the same
// likeliest ids in the same order (ties by lower id), the same log-probabilities within float
// rounding, rows that want none left alone, -inf logits and a vocabulary that is not a multiple
// of the block.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "engine/sched/token_logprobs.h"
#include "kernels/logprobs.cuh"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/kernel_test_support.h"

namespace sluice {
namespace {

using namespace kernel_test;  // NOLINT: the shared helpers of the kernel tests

TEST(LogprobsKernel, MatchesTheHostForEveryRowThatAsks) {
  SLUICE_REQUIRE_CUDA();
  static_assert(kernels::kMaxTopLogprobs == kMaxTopLogprobs);
  const int vocab = test::kIsEmulated ? 1001 : 151'937;
  const std::vector<int32_t> num_top = {-1, 0, 1, 5, 20, 20, 3};
  const int rows = static_cast<int>(num_top.size());
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(static_cast<size_t>(rows) * vocab);
  for (float& x : logits) x = normal(rng);
  // Row 4: ties at the top (the lower id first) and masked-out tokens; row 5: a peaked row.
  for (const int id : {17, 5, 900}) logits[4 * static_cast<size_t>(vocab) + id] = 20.0f;
  for (int id = 0; id < vocab; id += 3)
    logits[4 * static_cast<size_t>(vocab) + id + 1] = -std::numeric_limits<float>::infinity();
  logits[5 * static_cast<size_t>(vocab) + 42] = 60.0f;
  std::vector<int32_t> chosen(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r) chosen[static_cast<size_t>(r)] = (r * 7919) % vocab;
  chosen[4] = 900;

  constexpr float kUntouched = 123.0f;
  DeviceBuffer<float> d_logits(logits);
  DeviceBuffer<int32_t> d_chosen(chosen), d_top(num_top);
  DeviceBuffer<float> d_out(std::vector<float>(static_cast<size_t>(rows), kUntouched));
  DeviceBuffer<int32_t> d_ids(static_cast<size_t>(rows) * kMaxTopLogprobs);
  DeviceBuffer<float> d_lp(static_cast<size_t>(rows) * kMaxTopLogprobs);
  expect_ok(kernels::token_logprobs(d_logits.get(), d_chosen.get(), d_top.get(), d_out.get(),
                                    d_ids.get(), d_lp.get(), rows, vocab, nullptr));
  const auto out = d_out.download();
  const auto ids = d_ids.download();
  const auto lp = d_lp.download();
  for (int r = 0; r < rows; ++r) {
    SCOPED_TRACE("row " + std::to_string(r));
    if (num_top[static_cast<size_t>(r)] < 0) {
      EXPECT_EQ(out[static_cast<size_t>(r)], kUntouched) << "a row that wants none is left alone";
      continue;
    }
    const std::span<const float> row(logits.data() + static_cast<size_t>(r) * vocab,
                                     static_cast<size_t>(vocab));
    const TokenLogprobs host =
        token_logprobs(row, chosen[static_cast<size_t>(r)], num_top[static_cast<size_t>(r)]);
    EXPECT_NEAR(out[static_cast<size_t>(r)], host.logprob, 1e-5f);
    ASSERT_EQ(host.top.size(), static_cast<size_t>(num_top[static_cast<size_t>(r)]));
    for (size_t i = 0; i < host.top.size(); ++i) {
      EXPECT_EQ(ids[static_cast<size_t>(r) * kMaxTopLogprobs + i], host.top[i].first) << i;
      EXPECT_NEAR(lp[static_cast<size_t>(r) * kMaxTopLogprobs + i], host.top[i].second, 1e-5f) << i;
    }
  }
  EXPECT_EQ(ids[4 * kMaxTopLogprobs + 0], 5);  // the tie at 20: lowest id first
  EXPECT_EQ(ids[4 * kMaxTopLogprobs + 1], 17);
  EXPECT_EQ(ids[4 * kMaxTopLogprobs + 2], 900);
  EXPECT_NE(
      kernels::token_logprobs(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, -1, 8, nullptr),
      kernels::kKernelOk);
}

}  // namespace
}  // namespace sluice
