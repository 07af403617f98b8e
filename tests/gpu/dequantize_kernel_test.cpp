// Dequantization on the device at load: every GGUF block type widened by the kernel equals the
// CPU's dequantize_row (bit for bit with llama.cpp, tests/unit/core/dequantize_test.cpp) bit for
// bit, in every activation type, from aligned and odd addresses; bad lengths are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/core/quant_blocks.h"
#include "kernels/dequantize.cuh"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/kernel_test_support.h"

namespace sluice {
namespace {

using namespace kernel_test;  // NOLINT: the shared helpers of the kernel tests

template <typename T>
class DequantizeKernel : public ::testing::Test {};
TYPED_TEST_SUITE(DequantizeKernel, ElementTypes, ElementTypeNames);

// The byte offsets of the fp16 fields (scales and mins) of a quantized type's block.
std::vector<size_t> half_fields(DType dtype) {
  using namespace quant;
  switch (dtype) {
    case DType::Q8_0:
      return {offsetof(BlockQ8_0, d)};
    case DType::Q4_0:
      return {offsetof(BlockQ4_0, d)};
    case DType::Q4_1:
      return {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)};
    case DType::Q5_0:
      return {offsetof(BlockQ5_0, d)};
    case DType::Q5_1:
      return {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)};
    case DType::Q2_K:
      return {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)};
    case DType::Q3_K:
      return {offsetof(BlockQ3_K, d)};
    case DType::Q4_K:
      return {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)};
    case DType::Q5_K:
      return {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)};
    case DType::Q6_K:
      return {offsetof(BlockQ6_K, d)};
    default:
      return {};
  }
}

// num_blocks random blocks of dtype: random bytes (every quant value, scale and bit pattern),
// with the fp16 fields set to finite values of either sign over a wide range, since a NaN's
// payload need not survive the device's arithmetic.
std::vector<uint8_t> random_blocks(DType dtype, int64_t num_blocks, uint32_t seed) {
  const DTypeTraits& traits = dtype_traits(dtype);
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(static_cast<size_t>(num_blocks) * traits.block_bytes);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> exponent(-24.0f, 4.0f);
  for (int64_t b = 0; b < num_blocks; ++b) {
    for (const size_t field : half_fields(dtype)) {
      const float value = (rng() % 2 == 0 ? 1.0f : -1.0f) * std::exp2(exponent(rng));
      const uint16_t bits = f32_to_f16(value);
      std::memcpy(bytes.data() + static_cast<size_t>(b) * traits.block_bytes + field, &bits, 2);
    }
  }
  return bytes;
}

// Every quantized type widened on the device equals the CPU's dequantize_row (fp32, then rounded
// to T as the CPU rounds) bit for bit: odd row counts, rows of three blocks, blocks from an even
// and from an odd address.
TYPED_TEST(DequantizeKernel, EveryTypeIsBitExactWithCpu) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  for (const DTypeTraits& traits : all_dtype_traits()) {
    if (!traits.quantized) continue;
    const auto format = static_cast<kernels::QuantFormat>(traits.ggml_type);
    const int64_t cols = 3 * traits.block_elements;
    for (const int rows : {1, 7, 33}) {
      SCOPED_TRACE(std::string(traits.name) + ", rows " + std::to_string(rows));
      const int64_t n = rows * cols;
      const auto blocks = random_blocks(traits.dtype, n / traits.block_elements,
                                        static_cast<uint32_t>(rows) * 31 + traits.ggml_type);
      std::vector<float> reference(static_cast<size_t>(n));
      for (int r = 0; r < rows; ++r) {
        dequantize_row(traits.dtype, blocks.data() + r * dtype_num_bytes(traits.dtype, cols),
                       reference.data() + r * cols, cols);
      }
      const auto expected = to_storage<T>(reference);

      DeviceBuffer<uint8_t> d_aligned(blocks);
      // One spare byte in front: an odd address.
      std::vector<uint8_t> shifted_bytes(blocks.size() + 1);
      std::memcpy(shifted_bytes.data() + 1, blocks.data(), blocks.size());
      DeviceBuffer<uint8_t> d_shifted(shifted_bytes);
      DeviceBuffer<Storage<T>> d_out(static_cast<size_t>(n));
      expect_ok(kernels::dequantize<T>(format, d_aligned.get(), device_ptr<T>(d_out), n, nullptr));
      expect_same_bits(d_out.download(), expected, "dequantized");
      expect_ok(
          kernels::dequantize<T>(format, d_shifted.get() + 1, device_ptr<T>(d_out), n, nullptr));
      expect_same_bits(d_out.download(), expected, "dequantized from an odd address");
    }
    EXPECT_NE(kernels::dequantize<T>(format, nullptr, nullptr, traits.block_elements + 1, nullptr),
              kernels::kKernelOk)
        << traits.name << ": a length that is not whole blocks is rejected";
  }
  EXPECT_NE(
      kernels::dequantize<T>(static_cast<kernels::QuantFormat>(16), nullptr, nullptr, 256, nullptr),
      kernels::kKernelOk)
      << "a format without a kernel (IQ2_XXS) is rejected";
}

}  // namespace
}  // namespace sluice
