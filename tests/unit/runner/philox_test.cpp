#include "engine/core/philox.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace sluice {
namespace {

// Known-answer vectors for philox4x32-10 from Random123's kat_vectors file (counter, key,
// expected output). Recalled, then re-derived with an independent Python implementation of the
// published algorithm, and matched against several public copies of the file.
struct KnownAnswer {
  PhiloxCounter counter;
  PhiloxKey key;
  PhiloxCounter expected;
};

constexpr KnownAnswer kKnownAnswers[] = {
    {{{0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u}},
     {{0x00000000u, 0x00000000u}},
     {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
    {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
     {{0xffffffffu, 0xffffffffu}},
     {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
    // The pi-digits vector: counter and key are the leading hex digits of pi.
    {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
     {{0xa4093822u, 0x299f31d0u}},
     {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
};

// The generator is constexpr, so a kernel or a table can rely on it at compile time.
static_assert(philox4x32_10(kKnownAnswers[2].counter, kKnownAnswers[2].key).words[3] ==
              0x24126ea1u);

TEST(Philox, MatchesRandom123KnownAnswers) {
  for (const KnownAnswer& answer : kKnownAnswers) {
    const PhiloxCounter out = philox4x32_10(answer.counter, answer.key);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(out.words[i], answer.expected.words[i])
          << "counter word 0 " << std::hex << answer.counter.words[0] << ", output word " << i;
    }
  }
}

TEST(Philox, UnitFloatUsesTheTop24Bits) {
  EXPECT_EQ(uint32_to_unit_float(0u), 0.0f);
  EXPECT_EQ(uint32_to_unit_float(0x80000000u), 0.5f);
  EXPECT_EQ(uint32_to_unit_float(0x000000ffu), 0.0f);  // low 8 bits are dropped
  // The largest value is 1 - 2^-24: the interval is half-open.
  EXPECT_EQ(uint32_to_unit_float(0xffffffffu), 1.0f - std::ldexp(1.0f, -24));
  EXPECT_LT(uint32_to_unit_float(0xffffffffu), 1.0f);
}

// Expected values come from an independent Python implementation of Philox4x32-10 with the
// documented layout: key = (seed lo, seed hi), counter = (position, sample_idx, key lo, key hi),
// uniform = (word 0 >> 8) / 2^24.
TEST(Philox, SamplingUniformFollowsTheDocumentedLayout) {
  EXPECT_EQ(sampling_uniform(0, 0, 0, 0), 6694888.0f / 16777216.0f);  // word 0x6627e8d5
  EXPECT_EQ(sampling_uniform(0x0123456789abcdefull, 0xfedcba9876543210ull, 3, 17),
            1470071.0f / 16777216.0f);                                    // word 0x166e7757
  EXPECT_EQ(sampling_uniform(42, 7, 0, 100), 15842663.0f / 16777216.0f);  // word 0xf1bd67e2
}

TEST(Philox, EveryInputChangesTheUniform) {
  const float base = sampling_uniform(1, 2, 3, 4);
  EXPECT_NE(sampling_uniform(1ull << 40, 2, 3, 4), base);  // seed high word
  EXPECT_NE(sampling_uniform(5, 2, 3, 4), base);
  EXPECT_NE(sampling_uniform(1, 2ull << 40, 3, 4), base);  // request key high word
  EXPECT_NE(sampling_uniform(1, 5, 3, 4), base);
  EXPECT_NE(sampling_uniform(1, 2, 5, 4), base);
  EXPECT_NE(sampling_uniform(1, 2, 3, 5), base);
}

// Uniformity over consecutive positions of one stream: a chi-square test on 16 equal bins.
// With 15 degrees of freedom, a uniform source exceeds 56.49 with probability 1e-6.
TEST(Philox, UniformsOverPositionsAreUniform) {
  constexpr int kNumBins = 16;
  constexpr int kNumSamples = 1 << 16;
  int counts[kNumBins] = {};
  double sum = 0.0;
  for (uint32_t position = 0; position < kNumSamples; ++position) {
    const float u = sampling_uniform(1234, 99, 0, position);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    ++counts[static_cast<int>(u * kNumBins)];
    sum += u;
  }
  const double expected = static_cast<double>(kNumSamples) / kNumBins;
  double chi_square = 0.0;
  for (const int count : counts) chi_square += (count - expected) * (count - expected) / expected;
  EXPECT_LT(chi_square, 56.49);
  // The mean of n uniforms has standard deviation 1 / sqrt(12 n); allow 6 of them.
  EXPECT_NEAR(sum / kNumSamples, 0.5, 6.0 / std::sqrt(12.0 * kNumSamples));
}

}  // namespace
}  // namespace sluice
