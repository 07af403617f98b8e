// YaRN (gpt-oss) against the numbers the tiny-arch README states for its gpt-oss fixture
// (head_dim 64, theta 150000, factor 32, original context 4096, beta_fast 32, beta_slow 1): the
// ramp runs over pairs 8.093..17.398 under transformers' rule with truncate: false (the HF
// folder's config), 8..18 under llama.cpp's rounding (the GGUF files), and cos and sin grow by
// 0.1 ln(32) + 1 = 1.3466 either way.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/backend/rope.h"
#include "engine/model/model.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

// Pair i's inverse frequency with the ramp over [low, high], from the definition.
double yarn_inv_freq(int i, double low, double high) {
  const double plain = std::pow(150000.0, -2.0 * i / 64.0);
  const double mix = 1.0 - std::clamp((i - low) / (high - low), 0.0, 1.0);
  return plain * ((1.0 - mix) / 32.0 + mix);
}

void expect_ramp(const std::string& relative, double low, double high) {
  const auto model = load_model(test::shared_path(relative));
  const ModelConfig& c = model->config;
  ASSERT_EQ(c.rope_scaling.type, RopeScaling::Type::Yarn);
  const std::vector<double> inv = rope_inverse_frequencies(c, 0, {});
  ASSERT_EQ(inv.size(), 32u);
  for (const int i : {0, 5, 8, 9, 12, 17, 18, 25, 31}) {
    // The README gives the unrounded ends to three decimals.
    EXPECT_NEAR(inv[static_cast<size_t>(i)] / yarn_inv_freq(i, low, high), 1.0, 2e-4)
        << relative << " pair " << i;
  }
  EXPECT_NEAR(c.effective_attention_scale(), std::pow(1.0 + 0.1 * std::log(32.0), 2) / 8.0, 1e-6);
}

TEST(RopeYarn, HuggingFaceFolderKeepsTheUnroundedRamp) {
  expect_ramp("models/tiny-arch/gpt-oss/hf", 8.093, 17.398);
}

TEST(RopeYarn, GgufFileRoundsTheRampsEndsAsLlamaCpp) {
  expect_ramp("models/tiny-arch/gpt-oss/gguf/gpt-oss-F32.gguf", 8.0, 18.0);
}

}  // namespace
}  // namespace sluice
