// Products straight from the stored blocks (kernels/quant_linear.cuh): every GGUF block type and
// weights in T, in every activation type, through the GEMV (1, 5 and 16 tokens) and the tile
// kernel (17 and 70 tokens: a partial tile), with row counts that are not a multiple of a warp's
// or a tile's, against the product of the CPU's dequantize_row (bit-exact with llama.cpp) in
// double precision, rows copied by words and by bytes. Strided inputs and outputs (the q|k|v column
// ranges of mixed-type stacks), fp32 outputs from 16-bit activations (the LM head) and refused
// arguments too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/core/dtype.h"
#include "kernels/quant_linear.cuh"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/kernel_test_support.h"

namespace sluice {
namespace {

using namespace kernel_test;  // NOLINT: the shared helpers of the kernel tests

template <typename T>
class QuantLinearKernel : public ::testing::Test {};
TYPED_TEST_SUITE(QuantLinearKernel, ElementTypes, ElementTypeNames);

// The unit roundoff of T: the tile kernel rounds each weight to T, and the result is rounded to
// T once.
template <typename T>
double roundoff() {
  if constexpr (std::is_same_v<T, float>) return 4e-6;  // fp32 sums of hundreds of products
  if constexpr (std::is_same_v<T, __half>) return std::ldexp(1.0, -11);
  return std::ldexp(1.0, -8);
}

// A weight of `rows` rows of `cols` values: its stored bytes and its values as floats.
struct TestWeight {
  kernels::QuantFormat format;
  std::string name;
  std::vector<uint8_t> bytes;
  size_t row_bytes = 0;
  std::vector<float> values;  // [rows, cols]
};

template <typename T>
TestWeight quantized_weight(const DTypeTraits& traits, int rows, int cols, uint32_t seed) {
  TestWeight w{static_cast<kernels::QuantFormat>(traits.ggml_type), traits.name, {}, 0, {}};
  w.row_bytes = dtype_num_bytes(traits.dtype, cols);
  // Scales of 2^-14 .. 2^-8: every value and every sum stays finite in fp16.
  w.bytes = random_blocks(traits.dtype, rows * cols / traits.block_elements, seed, -14.0f, -8.0f);
  w.values.resize(static_cast<size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r)
    dequantize_row(traits.dtype, w.bytes.data() + r * w.row_bytes, w.values.data() + r * cols,
                   cols);
  return w;
}

template <typename T>
TestWeight dense_weight(int rows, int cols, uint32_t seed) {
  TestWeight w{kernels::QuantFormat::Dense, "dense", {}, cols * sizeof(Storage<T>), {}};
  const auto stored = random_storage<T>(static_cast<size_t>(rows) * cols, seed, -0.5f, 0.5f);
  w.bytes.resize(stored.size() * sizeof(Storage<T>));
  std::memcpy(w.bytes.data(), stored.data(), w.bytes.size());
  w.values = to_floats<T>(stored);
  return w;
}

// Runs y = x · wᵀ on the device with x rows x_stride apart and y rows y_stride apart (columns
// past `rows` keep a sentinel), and checks every value against the double-precision product
// within the roundoff of T over the sum of |w x|; the sentinels must be untouched. With
// weights_in_t (the tiles, which round each weight to T) the reference takes the weights rounded
// to T, and the bound is Y's roundoff of the value plus fp32 sums' 2^-14 of the sum of |w x|:
// over long rows the loose bound would pass a slice of K read from the wrong place.
template <typename T, typename Y>
void check_product(const TestWeight& w, int rows, int cols, int num_tokens, int x_stride,
                   int y_stride, uint32_t seed, int gemv_max_tokens = kernels::kQuantGemvMaxTokens,
                   bool weights_in_t = false) {
  SCOPED_TRACE(w.name + ": " + std::to_string(rows) + " x " + std::to_string(cols) + ", " +
               std::to_string(num_tokens) + " tokens, strides " + std::to_string(x_stride) + "/" +
               std::to_string(y_stride));
  const auto x = random_storage<T>(static_cast<size_t>(num_tokens) * x_stride, seed, -1.0f, 1.0f);
  const std::vector<float> xf = to_floats<T>(x);
  constexpr float kSentinel = -4096.0f;  // exact in every type
  const std::vector<float> y_init(static_cast<size_t>(num_tokens) * y_stride, kSentinel);
  DeviceBuffer<uint8_t> d_w(w.bytes);
  DeviceBuffer<Storage<T>> d_x(x);
  DeviceBuffer<Storage<Y>> d_y(to_storage<Y>(y_init));
  expect_ok(kernels::quant_linear<T, Y>(w.format, d_w.get(), w.row_bytes, rows, cols,
                                        device_ptr<T>(d_x), x_stride, device_ptr<Y>(d_y), y_stride,
                                        num_tokens, nullptr, gemv_max_tokens));
  const std::vector<float> y = to_floats<Y>(d_y.download());
  const double eps = weights_in_t ? std::ldexp(1.0, -14) : 2.0 * roundoff<T>() + roundoff<Y>();
  const std::vector<float> values = weights_in_t ? to_floats<T>(to_storage<T>(w.values)) : w.values;
  int misses = 0;
  for (int t = 0; t < num_tokens; ++t) {
    for (int c = 0; c < y_stride; ++c) {
      const float got = y[static_cast<size_t>(t) * y_stride + c];
      if (c >= rows) {
        EXPECT_EQ(got, kSentinel) << "token " << t << ", column " << c << " past the rows";
        continue;
      }
      double exact = 0.0, magnitude = 0.0;
      for (int k = 0; k < cols; ++k) {
        const double p = static_cast<double>(values[static_cast<size_t>(c) * cols + k]) *
                         xf[static_cast<size_t>(t) * x_stride + k];
        exact += p;
        magnitude += std::fabs(p);
      }
      const double bound =
          eps * magnitude + (weights_in_t ? roundoff<Y>() * std::fabs(exact) : 0.0) + 1e-30;
      if (!(std::fabs(got - exact) <= bound) && ++misses <= 5) {  // NaN fails too
        ADD_FAILURE() << "token " << t << ", row " << c << ": " << got << " vs " << exact
                      << " (bound " << bound << ")";
      }
    }
  }
}

TYPED_TEST(QuantLinearKernel, EveryBlockTypeMatchesTheDequantizedProduct) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  const std::vector<int> token_counts = test::kIsEmulated
                                            ? std::vector<int>{1, 5, 17, 33, 65}
                                            : std::vector<int>{1, 5, 8, 9, 16, 17, 70, 200};
  for (const DTypeTraits& traits : all_dtype_traits()) {
    if (!traits.quantized) continue;
    // Three blocks per row: K is not a multiple of the 64-value stretch of two tile steps
    // for the 32-value formats, and 768 values for the super-block formats.
    const int cols = static_cast<int>(3 * traits.block_elements);
    const int rows = test::kIsEmulated ? 37 : 133;
    const TestWeight w = quantized_weight<T>(traits, rows, cols, traits.ggml_type * 7 + 1);
    for (const int tokens : token_counts)
      check_product<T, T>(w, rows, cols, tokens, cols, rows, 100 + tokens,
                          kernels::kQuantGemvMaxTokens, tokens > kernels::kQuantGemvMaxTokens);
  }
}

// Long rows (ten slices of K, so each of the split tile's warps takes several, through both of
// its buffers) in 4-byte aligned rows, copied by whole words: Q6_K's 210-byte and Q3_K's 110-byte
// super-blocks start 2 bytes into a word, Q8_0's and Q4_K's slices on one. Every tile shape: 17
// and 33 tokens (warps splitting K), 65 (the 128-token tile).
TYPED_TEST(QuantLinearKernel, LongRowsCopiedByWords) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  const int rows = 70;
  for (const DType dtype : {DType::Q6_K, DType::Q3_K, DType::Q8_0, DType::Q4_K}) {
    const DTypeTraits& traits = dtype_traits(dtype);
    const int cols = traits.block_elements == 256 ? 2560 : 1280;
    const TestWeight w = quantized_weight<T>(traits, rows, cols, 5);
    ASSERT_EQ(w.row_bytes % 4, 0u);
    for (const int tokens : {17, 33, 65})
      check_product<T, T>(w, rows, cols, tokens, cols, rows, 9, kernels::kQuantGemvMaxTokens,
                          /*weights_in_t=*/true);
  }
}

// The tiles take any count when the GEMV's range is cut (quant_products may give them a batch of
// 9-16 tokens): one token and five, in the 32-token tile.
TYPED_TEST(QuantLinearKernel, TilesTakeFewTokensWhenAsked) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  const int cols = 512, rows = 70;
  const TestWeight w = quantized_weight<T>(dtype_traits(DType::Q4_K), rows, cols, 6);
  for (const int tokens : {1, 5}) check_product<T, T>(w, rows, cols, tokens, cols, rows, 8, 0);
}

TYPED_TEST(QuantLinearKernel, WeightsInTheActivationType) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  // 96 columns take the tile kernel past 16 tokens; 40 are not whole tile steps, so every count
  // goes through the GEMV.
  for (const int cols : {96, 40}) {
    const int rows = 67;
    const TestWeight w = dense_weight<T>(rows, cols, static_cast<uint32_t>(cols));
    for (const int tokens : {1, 7, 17, 70})
      check_product<T, T>(w, rows, cols, tokens, cols, rows, 7);
  }
}

// Strided activations (act(gate) * up read from the gate|up rows), outputs written into a
// column range of wider rows (one run of a q|k|v stack), and fp32 outputs (the LM head).
TYPED_TEST(QuantLinearKernel, StridesAndFp32Outputs) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  const DTypeTraits& q4k = dtype_traits(DType::Q4_K);
  const DTypeTraits& q6k = dtype_traits(DType::Q6_K);
  const int cols = 256;
  const TestWeight a = quantized_weight<T>(q4k, 33, cols, 3);
  const TestWeight b = quantized_weight<T>(q6k, 19, cols, 4);
  for (const int tokens : {3, 17}) {
    check_product<T, T>(a, 33, cols, tokens, 2 * cols + 8, 33 + 19, 11);
    check_product<T, T>(b, 19, cols, tokens, cols, 40, 12);
    check_product<T, float>(a, 33, cols, tokens, cols, 33, 13);
    check_product<T, float>(b, 19, cols, tokens, cols + 8, 21, 14);
  }
}

TYPED_TEST(QuantLinearKernel, RefusesArgumentsThatDoNotDescribeTheBlocks) {
  using T = TypeParam;
  const auto q4k = kernels::QuantFormat::Q4_K;
  const auto call = [](kernels::QuantFormat format, size_t row_bytes, int rows, int cols,
                       int x_stride, int y_stride, int tokens) {
    return kernels::quant_linear<T, T>(format, nullptr, row_bytes, rows, cols, nullptr, x_stride,
                                       nullptr, y_stride, tokens, nullptr);
  };
  EXPECT_NE(call(q4k, 144, 1, 255, 0, 0, 1), kernels::kKernelOk) << "cols not whole blocks";
  EXPECT_NE(call(q4k, 143, 1, 256, 0, 0, 1), kernels::kKernelOk) << "row bytes not its blocks";
  EXPECT_NE(call(q4k, 144, 1, 256, 100, 0, 1), kernels::kKernelOk) << "x stride below cols";
  EXPECT_NE(call(q4k, 144, 4, 256, 0, 3, 1), kernels::kKernelOk) << "y stride below rows";
  EXPECT_NE(call(q4k, 144, -1, 256, 0, 0, 1), kernels::kKernelOk) << "negative rows";
  EXPECT_NE(call(static_cast<kernels::QuantFormat>(16), 66, 1, 256, 0, 0, 1), kernels::kKernelOk)
      << "IQ2_XXS has no kernel";
  EXPECT_EQ(call(q4k, 144, 4, 256, 0, 0, 0), kernels::kKernelOk) << "no tokens: nothing to do";
  EXPECT_NE((kernels::quant_linear<T, T>(q4k, nullptr, 144, 1, 256, nullptr, 0, nullptr, 0, 1,
                                         nullptr, kernels::kQuantGemvMaxTokens + 1)),
            kernels::kKernelOk)
      << "a GEMV range past the GEMV's";
}

}  // namespace
}  // namespace sluice
