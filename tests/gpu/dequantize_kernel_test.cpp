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

// The embedding lookup from a table kept in its blocks equals the widened table's rows (the
// CPU's values rounded to T), times the scale rounded again, with zero rows for ids out of range.
TYPED_TEST(DequantizeKernel, RowsOfATableKeptInBlocks) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  for (const DTypeTraits& traits : all_dtype_traits()) {
    if (!traits.quantized) continue;
    SCOPED_TRACE(traits.name);
    const auto format = static_cast<kernels::QuantFormat>(traits.ggml_type);
    const int cols = static_cast<int>(2 * traits.block_elements);
    const int vocab = 11;
    const size_t row_bytes = dtype_num_bytes(traits.dtype, cols);
    const auto table = random_blocks(traits.dtype, vocab * 2, traits.ggml_type + 5u, -12.0f, 0.0f);
    const std::vector<int32_t> ids = {3, 0, 10, 3, -1, 11, 7};
    for (const float scale : {1.0f, 1.5f}) {
      std::vector<float> expected(ids.size() * static_cast<size_t>(cols), 0.0f);
      std::vector<float> row(static_cast<size_t>(cols));
      for (size_t t = 0; t < ids.size(); ++t) {
        if (ids[t] < 0 || ids[t] >= vocab) continue;
        dequantize_row(traits.dtype, table.data() + static_cast<size_t>(ids[t]) * row_bytes,
                       row.data(), cols);
        for (int c = 0; c < cols; ++c) {
          const float rounded = ElementTraits<T>::to_float(ElementTraits<T>::from_float(row[c]));
          expected[t * cols + c] = scale == 1.0f ? rounded : rounded * scale;
        }
      }
      DeviceBuffer<uint8_t> d_table(table);
      DeviceBuffer<int32_t> d_ids(ids);
      DeviceBuffer<Storage<T>> d_out(expected.size());
      expect_ok(kernels::dequantize_rows<T>(format, d_table.get(), row_bytes, d_ids.get(),
                                            device_ptr<T>(d_out), static_cast<int>(ids.size()),
                                            cols, vocab, scale, nullptr));
      expect_same_bits(d_out.download(), to_storage<T>(expected), "looked up");
    }
    EXPECT_NE(kernels::dequantize_rows<T>(format, nullptr, row_bytes + 1, nullptr, nullptr, 1, cols,
                                          vocab, 1.0f, nullptr),
              kernels::kKernelOk)
        << "a row size that is not the row's blocks is refused";
  }
}

}  // namespace
}  // namespace sluice
