// The integer tiles (kernels/quant_mmq.cuh): every format they have, in every activation type,
// against the double-precision product of the CPU's dequantize_row (bit-exact with llama.cpp) and
// the activations quantized as quantize_q8_rows quantizes them. Shapes: rows that leave a tile
// part full, a K whose last slice is part full (25 blocks) or several super-blocks, 1 and 17
// tokens (the 32-row tiles; a warp with no tokens) and 70 (the 64-row tiles, a second token tile);
// on a GPU also 64, 65 and 200. A token's outputs are the same bits whatever its neighbours;
// K split in parts; strided outputs, fp32 outputs and the arguments refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/core/dtype.h"
#include "kernels/quant_gemv_int8.cuh"
#include "kernels/quant_mmq.cuh"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/int8_reference.h"
#include "tests/gpu/kernel_test_support.h"

namespace sluice {
namespace {

using namespace kernel_test;     // NOLINT: the shared helpers of the kernel tests
using namespace int8_reference;  // NOLINT: the integer products' references

template <typename T>
class QuantMmq : public ::testing::Test {};
TYPED_TEST_SUITE(QuantMmq, ElementTypes, ElementTypeNames);

constexpr float kMmqSentinel = -4096.0f;

// The tiles' outputs ([tokens, y_stride], the sentinel past `rows`) for x [tokens, cols] of T
// (rows x_stride apart), quantized on the device.
template <typename T, typename Y>
std::vector<float> run_mmq(const Weight& w, int rows, int cols, const std::vector<Storage<T>>& x,
                           int tokens, int x_stride, int y_stride, int parts = 1) {
  DeviceBuffer<uint8_t> d_w(w.bytes);
  DeviceBuffer<Storage<T>> d_x(x);
  DeviceBuffer<uint8_t> d_q8(std::vector<uint8_t>(kernels::q8_rows_bytes(tokens, cols)));
  DeviceBuffer<Storage<Y>> d_y(
      to_storage<Y>(std::vector<float>(static_cast<size_t>(tokens) * y_stride, kMmqSentinel)));
  const kernels::Q8Rows q8 = kernels::q8_rows_in(d_q8.get(), tokens, cols);
  expect_ok(kernels::quantize_q8_rows<T>(device_ptr<T>(d_x), x_stride, q8, nullptr));
  DeviceBuffer<float> d_partials(
      std::max<size_t>(1, kernels::quant_mmq_partial_floats(rows, tokens, parts)));
  expect_ok(kernels::quant_mmq<Y>(
      w.format, d_w.get(), w.row_bytes, rows, q8, device_ptr<Y>(d_y), y_stride, nullptr,
      kernels::MmqSplit{parts, parts > 1 ? d_partials.get() : nullptr}));
  return to_floats<Y>(d_y.download());
}

template <typename T, typename Y>
void check_mmq(const Weight& w, int rows, int cols, int tokens, int x_stride, int y_stride,
               uint32_t seed, int parts = 1) {
  SCOPED_TRACE(w.name + ": " + std::to_string(rows) + " x " + std::to_string(cols) + ", " +
               std::to_string(tokens) + " tokens, " + std::to_string(parts) + " parts");
  const auto x = random_storage<T>(static_cast<size_t>(tokens) * x_stride, seed, -1.0f, 1.0f);
  const QuantizedRows ref = quantize_like_the_kernel(to_floats<T>(x), tokens, cols, x_stride);
  const std::vector<float> y = run_mmq<T, Y>(w, rows, cols, x, tokens, x_stride, y_stride, parts);
  expect_int8_products<Y>(w, ref, y, rows, cols, tokens, y_stride, kMmqSentinel);
}

TYPED_TEST(QuantMmq, EveryFormatMatchesTheProductOfTheQuantizedActivations) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  const std::vector<int> token_counts =
      test::kIsEmulated ? std::vector<int>{1, 17, 70} : std::vector<int>{1, 17, 64, 65, 70, 200};
  for (const DType dtype : kInt8Formats) {
    const auto format = static_cast<kernels::QuantFormat>(dtype_traits(dtype).ggml_type);
    ASSERT_TRUE(kernels::has_quant_mmq(format)) << dtype_traits(dtype).name;
    // Three super-blocks per row for the K formats (a slice each), 25 blocks for the others (the
    // last slice holds one).
    const int cols = dtype_traits(dtype).block_elements == 256 ? 768 : 800;
    const int rows = test::kIsEmulated ? 37 : 133;
    const Weight w = make_weight(dtype, rows, cols, static_cast<uint32_t>(dtype) * 5 + 1);
    for (const int tokens : token_counts)
      check_mmq<T, T>(w, rows, cols, tokens, cols, rows, 500 + tokens);
  }
}

// A token's outputs do not depend on the other tokens of the product (the 32-row tiles of a
// 3-token product and the 64-row tiles of a 70-token one give token 2 the same bits), and rows
// into a column range of wider rows keep the columns past them.
TYPED_TEST(QuantMmq, ATokensOutputsDoNotDependOnItsNeighbours) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  for (const DType dtype : {DType::Q4_K, DType::Q6_K, DType::Q8_0}) {
    SCOPED_TRACE(dtype_traits(dtype).name);
    const int rows = 45, cols = 512, y_stride = 48, many = 70;
    const Weight w = make_weight(dtype, rows, cols, static_cast<uint32_t>(dtype) + 90);
    const auto x = random_storage<T>(static_cast<size_t>(many) * cols, 91, -2.0f, 2.0f);
    const std::vector<Storage<T>> first3(x.begin(), x.begin() + 3 * cols);
    const std::vector<float> alone = run_mmq<T, float>(w, rows, cols, first3, 3, cols, y_stride);
    const std::vector<float> among = run_mmq<T, float>(w, rows, cols, x, many, cols, y_stride);
    for (int t = 0; t < 3; ++t) {
      EXPECT_EQ(std::memcmp(alone.data() + static_cast<size_t>(t) * y_stride,
                            among.data() + static_cast<size_t>(t) * y_stride,
                            static_cast<size_t>(y_stride) * sizeof(float)),
                0)
          << "token " << t;
    }
  }
}

// K split over parts whose partial sums a second launch adds: 2 and 3 parts of 17 super-blocks
// or 18 slices of 32-value blocks (the last part shorter), more parts than slices (one part
// each), into strided rows; and a token's outputs under one split do not depend on its
// neighbours either.
TEST(QuantMmqSplit, PartsOfKAddUpToTheProduct) {
  SLUICE_REQUIRE_CUDA();
  using T = __nv_bfloat16;
  for (const DType dtype : {DType::Q4_K, DType::Q6_K, DType::Q8_0, DType::Q5_1}) {
    const int cols = dtype_traits(dtype).block_elements == 256 ? 17 * 256 : 137 * 32;
    const Weight w = make_weight(dtype, 21, cols, static_cast<uint32_t>(dtype) + 70);
    for (const int parts : {2, 3}) {
      check_mmq<T, float>(w, 21, cols, 5, cols, 24, 71, parts);
      check_mmq<T, T>(w, 21, cols, 70, cols, 21, 72, parts);
    }
    SCOPED_TRACE(dtype_traits(dtype).name);
    const auto x = random_storage<T>(static_cast<size_t>(70) * cols, 73, -2.0f, 2.0f);
    const std::vector<Storage<T>> first3(x.begin(), x.begin() + 3 * cols);
    const std::vector<float> alone = run_mmq<T, float>(w, 21, cols, first3, 3, cols, 21, 3);
    const std::vector<float> among = run_mmq<T, float>(w, 21, cols, x, 70, cols, 21, 3);
    EXPECT_EQ(std::memcmp(alone.data(), among.data(), alone.size() * sizeof(float)), 0);
  }
  const Weight small = make_weight(DType::Q4_K, 9, 256, 74);
  check_mmq<T, T>(small, 9, 256, 4, 256, 9, 75, 8);  // one slice: one part
}

// The parts a product's K is split into: a function of the shape and the SM count alone.
TEST(QuantMmqSplit, PartsFollowTheShape) {
  // An 8B model's matrices on 132 SMs: 128 tiles of 32 rows want 5 parts for 4 blocks an SM,
  // capped by 16 slices of 4096 at 4 each; 14336 values allow the 5; 28672 rows need none.
  EXPECT_EQ(kernels::quant_mmq_parts(4096, 4096, 132), 4);
  EXPECT_EQ(kernels::quant_mmq_parts(4096, 14336, 132), 5);
  EXPECT_EQ(kernels::quant_mmq_parts(28672, 4096, 132), 1);
  EXPECT_EQ(kernels::quant_mmq_parts(128256, 4096, 132), 1);
  EXPECT_EQ(kernels::quant_mmq_parts(64, 65536, 132), kernels::kMmqMostParts);
  EXPECT_EQ(kernels::quant_mmq_parts(4096, 256, 132), 1);  // one slice
  EXPECT_EQ(kernels::quant_mmq_parts(0, 4096, 132), 1);
  EXPECT_EQ(kernels::quant_mmq_partial_floats(4096, 256, 1), 0u);
  EXPECT_EQ(kernels::quant_mmq_partial_floats(4096, 256, 4), 4u * 4096 * 256);
}

// Strided activations and fp32 outputs into a column range of wider rows (one run of a q|k|v
// stack, the LM head).
TYPED_TEST(QuantMmq, StridesAndFp32Outputs) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  const int cols = 256;
  const Weight a = make_weight(DType::Q4_K, 9, cols, 13);
  const Weight b = make_weight(DType::Q5_1, 7, cols, 14);
  check_mmq<T, float>(a, 9, cols, 19, 2 * cols + 32, 9 + 7, 15);
  check_mmq<T, T>(b, 7, cols, 3, cols + 32, 11, 16);
}

TEST(QuantMmqArguments, RefusesWhatItHasNoKernelFor) {
  const auto call = [](kernels::QuantFormat format, size_t row_bytes, int rows, int cols,
                       int tokens, int y_stride) {
    const kernels::Q8Rows x{nullptr, nullptr, tokens, cols};
    return kernels::quant_mmq<float>(format, nullptr, row_bytes, rows, x, nullptr, y_stride,
                                     nullptr);
  };
  EXPECT_FALSE(kernels::has_quant_mmq(kernels::QuantFormat::Q2_K));
  EXPECT_FALSE(kernels::has_quant_mmq(kernels::QuantFormat::Q3_K));
  EXPECT_FALSE(kernels::has_quant_mmq(kernels::QuantFormat::Dense));
  const auto q4k = kernels::QuantFormat::Q4_K;
  EXPECT_NE(call(kernels::QuantFormat::Q2_K, 84, 4, 256, 20, 4), kernels::kKernelOk);
  EXPECT_NE(call(q4k, 143, 4, 256, 20, 4), kernels::kKernelOk);       // not the row's blocks
  EXPECT_NE(call(q4k, 144, 4, 256 + 32, 20, 4), kernels::kKernelOk);  // not whole super-blocks
  EXPECT_NE(call(q4k, 144, 4, 256, 20, 3), kernels::kKernelOk);       // rows wider than y's
  EXPECT_NE(call(q4k, 144, -1, 256, 20, 4), kernels::kKernelOk);
  EXPECT_NE(call(q4k, 144, 4, 256, 65535 * 64 + 1, 4), kernels::kKernelOk);  // past a grid
  // A split without its partial sums' buffer, or of more parts than there are.
  const kernels::Q8Rows x{nullptr, nullptr, 20, 256};
  EXPECT_NE(kernels::quant_mmq<float>(q4k, nullptr, 144, 4, x, nullptr, 4, nullptr,
                                      kernels::MmqSplit{2, nullptr}),
            kernels::kKernelOk);
  float partial = 0.0f;
  EXPECT_NE(kernels::quant_mmq<float>(q4k, nullptr, 144, 4, x, nullptr, 4, nullptr,
                                      kernels::MmqSplit{kernels::kMmqMostParts + 1, &partial}),
            kernels::kKernelOk);
  EXPECT_EQ(call(q4k, 144, 0, 256, 20, 0), kernels::kKernelOk);  // nothing to do
  EXPECT_EQ(call(q4k, 144, 4, 256, 0, 4), kernels::kKernelOk);
}

}  // namespace
}  // namespace sluice
