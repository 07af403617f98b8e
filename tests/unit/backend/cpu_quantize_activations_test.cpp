// Activation quantization against blocks computed by hand (scales and fp16 bit patterns worked
// out with IEEE float32/float16 arithmetic outside Sluice). The cases are chosen where ggml's
// two Q8_0 roundings disagree: its x86 SIMD path (id = 127 / amax, ties to even), which the
// llama.cpp references used, and its scalar reference (id = 1 / d, ties away from zero).
#include "engine/backend/cpu/cpu_quantize_activations.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "engine/backend/cpu/cpu_quant_operands.h"

namespace sluice {
namespace {

using quant::BlockQ8_0;
using quant::BlockQ8_1;
using quant::BlockQ8_K;

uint32_t float_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// Three blocks of 32: amax 127 (id = 1 exactly, so q = x rounded, ties to even), all zeros, and
// amax 0.34, where 127 / amax and 1 / (amax / 127) round to different floats.
std::vector<float> q8_0_row() {
  std::vector<float> x(96, 0.0f);
  const float first[] = {127.0f, -127.0f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, 3.49f};
  std::copy(std::begin(first), std::end(first), x.begin());
  x[64] = 0.34f;
  x[65] =
      0.17f;  // 0.17 * fl(127 / 0.34) = 63.5 exactly -> 64 (the scalar path gets 63.499996 -> 63)
  x[66] = -0.17f;  // -> -64
  return x;
}

void expect_q8_0_values(const int8_t* qs, uint16_t d0, uint16_t d2) {
  // Block 0: d = 1.0 (fp16 0x3c00); 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, 126.5 -> 126 (ties to even).
  const int8_t expected0[] = {127, -127, 0, 2, 2, 0, -2, -2, 126, 3};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(qs[i], expected0[i]) << "element " << i;
  for (int i = 10; i < 32; ++i) EXPECT_EQ(qs[i], 0) << "element " << i;
  EXPECT_EQ(d0, 0x3c00);
  // Block 2: d = fl(0.34 / 127) = 0.0026771654 -> fp16 0x197c.
  EXPECT_EQ(d2, 0x197c);
  EXPECT_EQ(qs[64], 127);
  EXPECT_EQ(qs[65], 64);
  EXPECT_EQ(qs[66], -64);
  for (int i = 67; i < 96; ++i) EXPECT_EQ(qs[i], 0) << "element " << i;
}

TEST(QuantizeActivations, Q8_0RoundsTiesToEvenWithTheSimdScale) {
  const std::vector<float> x = q8_0_row();
  BlockQ8_0 y[3];
  quantize_row_q8_0(x.data(), y, 96);
  int8_t qs[96];
  for (int b = 0; b < 3; ++b) std::memcpy(qs + 32 * b, y[b].qs, 32);
  expect_q8_0_values(qs, y[0].d, y[2].d);
  // Block 1 is all zeros: d = 0 and every q = 0.
  EXPECT_EQ(y[1].d, 0);
  for (int i = 32; i < 64; ++i) EXPECT_EQ(qs[i], 0) << "element " << i;
}

TEST(QuantizeActivations, Q8_1AddsTheSumScaledByTheUnroundedD) {
  std::vector<float> x = q8_0_row();
  // A fourth block: amax 10, d = fl(10 / 127) = 0.0787401572 (fp16 0x2d0a); 10 -> 127,
  // -10 -> -127, 0.4 -> 5 (0.4 * 12.7 = 5.08): sum 5, s = fp16(d * 5) = 0x364d, where the
  // fp16-rounded d would give 0x364c.
  x.resize(128, 0.0f);
  x[96] = 10.0f;
  x[97] = -10.0f;
  x[98] = 0.4f;
  BlockQ8_1 y[4];
  quantize_row_q8_1(x.data(), y, 128);
  int8_t qs[128];
  for (int b = 0; b < 4; ++b) std::memcpy(qs + 32 * b, y[b].qs, 32);
  expect_q8_0_values(qs, y[0].d, y[2].d);
  // Sums: 127 - 127 + 0 + 2 + 2 + 0 - 2 - 2 + 126 + 3 = 129 with d = 1 -> 129.0 (fp16 0x5808);
  // block 2: 127 + 64 - 64 = 127, d * 127 = 0.34 -> fp16 0x3571.
  EXPECT_EQ(y[0].s, 0x5808);
  EXPECT_EQ(y[1].d, 0);
  EXPECT_EQ(y[1].s, 0);
  EXPECT_EQ(y[2].s, 0x3571);
  EXPECT_EQ(y[3].d, 0x2d0a);
  EXPECT_EQ(qs[96], 127);
  EXPECT_EQ(qs[97], -127);
  EXPECT_EQ(qs[98], 5);
  EXPECT_EQ(y[3].s, 0x364d);
}

TEST(QuantizeActivations, Q8_KScalesByTheFirstLargestValueWithItsSign) {
  std::vector<float> x(3 * 256, 0.0f);
  // Block 0: the first largest magnitude is -127 (the +127 after it does not replace it), so
  // iscale = -127 / -127 = 1 and q = x rounded, ties to even; d = 1.
  const float block0[] = {-127.0f, 127.0f, 0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 100.25f};
  std::copy(std::begin(block0), std::end(block0), x.begin());
  x[16] = 3.0f;
  // Block 1: max 3 (positive): iscale = fl(-127 / 3) = -42.333332, d = 1 / iscale =
  // -0.023622047 (bits 0xbcc18306); 1.5 -> -63.5 -> -64, -1.5 -> 64, 0.75 -> -31.75 -> -32,
  // 2 -> -84.666664 -> -85, -3 -> 127, 0.1 -> -4.2333331 -> -4.
  const float block1[] = {3.0f, 1.5f, -1.5f, 0.75f, 2.0f, -3.0f, 0.1f};
  std::copy(std::begin(block1), std::end(block1), x.begin() + 256);
  // Block 2 is all zeros. Block 3: a NaN is never the largest (it never compares greater), so
  // max = -4 and iscale = 31.75: 2 -> 63.5 -> 64, -4 -> -127.
  x.resize(4 * 256, 0.0f);
  x[3 * 256] = std::numeric_limits<float>::quiet_NaN();
  x[3 * 256 + 1] = 2.0f;
  x[3 * 256 + 2] = -4.0f;
  BlockQ8_K y[4];
  quantize_row_q8_K(x.data(), y, 4 * 256);

  EXPECT_EQ(float_bits(y[0].d), float_bits(1.0f));
  const int8_t expected0[] = {-127, 127, 0, 2, 2, 0, -2, 100};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y[0].qs[i], expected0[i]) << "element " << i;
  EXPECT_EQ(y[0].qs[16], 3);
  EXPECT_EQ(y[0].bsums[0], -127 + 127 + 2 + 2 - 2 + 100);
  EXPECT_EQ(y[0].bsums[1], 3);
  for (int g = 2; g < 16; ++g) EXPECT_EQ(y[0].bsums[g], 0) << "group " << g;

  EXPECT_EQ(float_bits(y[1].d), 0xbcc18306u);
  const int8_t expected1[] = {-127, -64, 64, -32, -85, 127, -4};
  for (int i = 0; i < 7; ++i) EXPECT_EQ(y[1].qs[i], expected1[i]) << "element " << i;
  for (int i = 7; i < 256; ++i) EXPECT_EQ(y[1].qs[i], 0) << "element " << i;
  EXPECT_EQ(y[1].bsums[0], -127 - 64 + 64 - 32 - 85 + 127 - 4);

  EXPECT_EQ(y[2].d, 0.0f);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(y[2].qs[i], 0) << "element " << i;
  for (int g = 0; g < 16; ++g) EXPECT_EQ(y[2].bsums[g], 0) << "group " << g;

  EXPECT_EQ(float_bits(y[3].d), float_bits(1.0f / 31.75f));
  EXPECT_EQ(y[3].qs[1], 64);
  EXPECT_EQ(y[3].qs[2], -127);
}

TEST(QuantizeActivations, WeightTypesTakeGgmlsActivationBlocks) {
  for (const DType dtype : {DType::Q4_0, DType::Q5_0, DType::Q8_0}) {
    EXPECT_EQ(activation_block_type(dtype), ActivationBlockType::Q8_0) << dtype_name(dtype);
  }
  for (const DType dtype : {DType::Q4_1, DType::Q5_1}) {
    EXPECT_EQ(activation_block_type(dtype), ActivationBlockType::Q8_1) << dtype_name(dtype);
  }
  for (const DType dtype : {DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    EXPECT_EQ(activation_block_type(dtype), ActivationBlockType::Q8_K) << dtype_name(dtype);
  }
}

}  // namespace
}  // namespace sluice
