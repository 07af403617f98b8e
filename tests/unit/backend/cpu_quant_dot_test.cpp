// The quantized dot products against llama.cpp's own quantized tensors: for every type, each row
// of the llama-q fixture's blk.0.attn_k.weight times random activations, against the float dot
// product with gguf-py's bit-exact dequantization of the same row. And the SIMD versions against
// the scalar one, bit for bit.
#include "engine/backend/cpu/cpu_quant_dot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/backend/cpu/cpu_quant_gemm.h"
#include "engine/backend/cpu/cpu_quantize_activations.h"
#include "engine/core/quant_blocks.h"
#include "engine/core/thread_pool.h"
#include "tests/support/float_compare.h"
#include "tests/unit/backend/quant_test_data.h"

namespace sluice {
namespace {

using test::FixtureTensor;

// One activation row quantized for a weight type, with what the tests need to know of it.
struct QuantizedRow {
  std::vector<uint8_t> blocks;
  std::vector<double> dequantized;  // q * d of each value (d of the fp16 or float scale)
  std::vector<double> step;         // the scale d of each value's block
  std::vector<double> sum_error;    // Q8_1: s - d * sum(q) of each block (s is rounded to fp16)
};

float scale_of(const quant::BlockQ8_0& b) {
  return f16_to_f32(b.d);
}
float scale_of(const quant::BlockQ8_1& b) {
  return f16_to_f32(b.d);
}
float scale_of(const quant::BlockQ8_K& b) {
  return b.d;
}

template <typename Block>
QuantizedRow quantize_blocks(void (*quantize)(const float*, Block*, int64_t), const float* x,
                             int64_t cols) {
  constexpr int64_t kElements = sizeof(Block::qs);
  std::vector<Block> blocks(static_cast<size_t>(cols / kElements));
  quantize(x, blocks.data(), cols);
  QuantizedRow out;
  for (int64_t i = 0; i < cols; ++i) {
    const Block& b = blocks[static_cast<size_t>(i / kElements)];
    out.step.push_back(std::fabs(scale_of(b)));
    out.dequantized.push_back(double{scale_of(b)} * b.qs[i % kElements]);
  }
  if constexpr (std::is_same_v<Block, quant::BlockQ8_1>) {
    for (const auto& b : blocks) {
      int sum = 0;
      for (const int8_t q : b.qs) sum += q;
      out.sum_error.push_back(double{f16_to_f32(b.s)} - double{f16_to_f32(b.d)} * sum);
    }
  }
  out.blocks.resize(blocks.size() * sizeof(Block));
  std::memcpy(out.blocks.data(), blocks.data(), out.blocks.size());
  return out;
}

QuantizedRow quantize_for(DType dtype, const float* x, int64_t cols) {
  switch (activation_block_type(dtype)) {
    case ActivationBlockType::Q8_0:
      return quantize_blocks(quantize_row_q8_0, x, cols);
    case ActivationBlockType::Q8_1:
      return quantize_blocks(quantize_row_q8_1, x, cols);
    case ActivationBlockType::Q8_K:
      return quantize_blocks(quantize_row_q8_K, x, cols);
  }
  return {};
}

// The min m of each 32-block of a Q4_1/Q5_1 row (their dot product takes m * s, not m * sum(x)).
std::vector<double> block_mins(DType dtype, const uint8_t* row, int64_t cols) {
  std::vector<double> mins;
  if (dtype != DType::Q4_1 && dtype != DType::Q5_1) return mins;
  const size_t block_bytes = dtype_traits(dtype).block_bytes;
  for (int64_t b = 0; b < cols / 32; ++b) {
    uint16_t m;
    std::memcpy(&m, row + b * block_bytes + offsetof(quant::BlockQ4_1, m), sizeof m);
    mins.push_back(f16_to_f32(m));
  }
  return mins;
}

constexpr int kNumActivationRows = 6;

// For each row of a fixture tensor and kNumActivationRows random activation rows, calls
// check(row, y, w, x, quantized x) with y the kernel's dot product.
template <typename Check>
void for_each_fixture_dot(const FixtureTensor& w, const Check& check) {
  const std::vector<float> x = test::random_activations(kNumActivationRows, w.cols, 17);
  for (int t = 0; t < kNumActivationRows; ++t) {
    const float* xt = x.data() + t * w.cols;
    const QuantizedRow xq = quantize_for(w.dtype, xt, w.cols);
    for (int64_t r = 0; r < w.rows; ++r) {
      const float y = quant_dot(w.dtype, w.data + r * w.row_bytes, xq.blocks.data(), w.cols,
                                best_quant_kernel_isa());
      check(r, y, w.dequantized.data() + r * w.cols, xt, xq);
    }
  }
}

// |y - w·x| within what 8-bit activations allow. Per value, |x - q * d| <= d / 2 + |x| * 2^-10
// for Q8_0/Q8_1 (rounding to an integer, plus the fp16 rounding of d: 2^-11 relative, and three
// float roundings) and <= d / 2 + |x| * 2^-20 for Q8_K (its d is a float); so |y - w·x| <=
// sum |w| * that + sum |m * (s - d * sum(q))| (Q4_1/Q5_1 use the fp16 s) + float rounding.
void expect_within_activation_bound(const FixtureTensor& w) {
  const double relative = activation_block_type(w.dtype) == ActivationBlockType::Q8_K
                              ? std::ldexp(1.0, -20)
                              : std::ldexp(1.0, -10);
  double worst_fraction_of_bound = 0.0;
  for_each_fixture_dot(w, [&](int64_t r, float y, const float* wr, const float* x,
                              const QuantizedRow& xq) {
    double exact = 0.0, bound = 0.0, magnitude = 0.0;
    for (int64_t i = 0; i < w.cols; ++i) {
      exact += double{wr[i]} * x[i];
      bound +=
          std::fabs(wr[i]) * (xq.step[static_cast<size_t>(i)] / 2 + std::fabs(x[i]) * relative);
      magnitude += std::fabs(double{wr[i]} * x[i]);
    }
    const std::vector<double> mins = block_mins(w.dtype, w.data + r * w.row_bytes, w.cols);
    for (size_t b = 0; b < mins.size(); ++b) bound += std::fabs(mins[b] * xq.sum_error[b]);
    bound += 1e-5 * magnitude;
    ASSERT_LE(std::fabs(y - exact), bound) << dtype_name(w.dtype) << " row " << r;
    worst_fraction_of_bound = test::nan_max(worst_fraction_of_bound, std::fabs(y - exact) / bound);
  });
  // A bound that is never approached would not catch much: the real error should use a fair
  // part of it (random rounding errors add up like a random walk, the bound like a line).
  EXPECT_GT(worst_fraction_of_bound, 0.05) << dtype_name(w.dtype);
}

// Against the dequantized activations the only differences left are float roundings: the
// kernel's (one product and one sum per block or group) and the dequantization's, which for the
// K-quants subtracts two terms larger than the result (d * scale * q - dmin * min). Measured:
// at most 9e-8 of sum |w * x|; a wrong bit, scale or element order moves the result by percents.
void expect_close_to_dequantized_product(const FixtureTensor& w) {
  for_each_fixture_dot(
      w, [&](int64_t r, float y, const float* wr, const float*, const QuantizedRow& xq) {
        double expected = 0.0, magnitude = 0.0;
        for (int64_t i = 0; i < w.cols; ++i) {
          expected += double{wr[i]} * xq.dequantized[static_cast<size_t>(i)];
          magnitude += std::fabs(double{wr[i]} * xq.dequantized[static_cast<size_t>(i)]);
        }
        const std::vector<double> mins = block_mins(w.dtype, w.data + r * w.row_bytes, w.cols);
        for (size_t b = 0; b < mins.size(); ++b) expected += mins[b] * xq.sum_error[b];
        ASSERT_NEAR(y, expected, 1e-6 * magnitude) << dtype_name(w.dtype) << " row " << r;
      });
}

TEST(QuantDot, FixtureRowsWithinTheActivationQuantizationBound) {
  for (const DType dtype : test::kernel_dtypes()) {
    SCOPED_TRACE(dtype_name(dtype));
    expect_within_activation_bound(test::load_attn_k(dtype));
  }
  // The Q6_K tensor of the mixed Q4_K_M file.
  expect_within_activation_bound(
      test::load_llama_q_tensor("Q4_K_M", "blk.1.attn_v.weight", "Q4_K_M"));
}

TEST(QuantDot, FixtureRowsMatchTheProductWithDequantizedActivations) {
  for (const DType dtype : test::kernel_dtypes()) {
    SCOPED_TRACE(dtype_name(dtype));
    expect_close_to_dequantized_product(test::load_attn_k(dtype));
  }
  expect_close_to_dequantized_product(
      test::load_llama_q_tensor("Q4_K_M", "blk.1.attn_v.weight", "Q4_K_M"));
}

std::vector<QuantKernelIsa> supported_isas() {
  std::vector<QuantKernelIsa> isas;
  for (const QuantKernelIsa isa :
       {QuantKernelIsa::Scalar, QuantKernelIsa::Avx2, QuantKernelIsa::Avx512Vnni}) {
    if (quant_kernel_isa_supported(isa)) isas.push_back(isa);
  }
  return isas;
}

// Every supported SIMD version gives the scalar version's bits, on llama.cpp's tensors and on
// random rows of a width with a tail (7 blocks of 32: one chunk of 64 is half padding), an odd
// row count (a panel of 16 rows with 7 empty), and 1 to 8 tokens (the direct path: rows decoded
// in registers, no unpacking; on AVX-512 Q4_K takes every token count in its own kernel, Q8_0
// every count from 2 (sixteen rows in lanes, 9 rows a padded block, 7 blocks an odd count) and
// Q6_K blocks of 16 x 1, 8 x 2, 4 x 4 and 2 x 8 outputs, whole and padded) as well as 11 and 13
// (rows unpacked first, and on AVX-512 interleaved into panels of 16: two token tiles, the second
// partial; Q4_K on AVX-512: eight tokens and then the rest on the same rows).
TEST(QuantDot, SimdVersionsGiveTheScalarBits) {
  const std::vector<QuantKernelIsa> isas = supported_isas();
  std::printf("quantized kernel versions on this CPU:");
  for (const QuantKernelIsa isa : isas) std::printf(" %s", quant_kernel_isa_name(isa));
  std::printf("\n");
  ThreadPool pool(1);
  for (const DType dtype : test::kernel_dtypes()) {
    SCOPED_TRACE(dtype_name(dtype));
    const FixtureTensor fixture = test::load_attn_k(dtype);
    const int64_t random_cols = dtype_traits(dtype).block_elements == 32 ? 7 * 32 : 3 * 256;
    const std::vector<uint8_t> random = test::random_quant_rows(dtype, 9, random_cols, 5);
    const QuantMatrixView matrices[] = {
        {dtype, fixture.data, fixture.rows, fixture.cols, fixture.row_bytes},
        {dtype, random.data(), 9, random_cols, dtype_num_bytes(dtype, random_cols)},
    };
    for (const auto& [w, num_tokens] :
         {std::pair{matrices[0], 1}, std::pair{matrices[0], 7}, std::pair{matrices[1], 1},
          std::pair{matrices[1], 2}, std::pair{matrices[1], 3}, std::pair{matrices[0], 4},
          std::pair{matrices[0], 5}, std::pair{matrices[1], 6}, std::pair{matrices[1], 7},
          std::pair{matrices[1], 8}, std::pair{matrices[1], 11}, std::pair{matrices[0], 13}}) {
      const std::vector<float> x = test::random_activations(num_tokens, w.cols, 23);
      std::vector<float> scalar(static_cast<size_t>(num_tokens * w.rows));
      quant_gemm(w, x.data(), num_tokens, scalar.data(), w.rows, pool, QuantKernelIsa::Scalar);
      for (const QuantKernelIsa isa : isas) {
        std::vector<float> y(scalar.size(), -1.0f);
        quant_gemm(w, x.data(), num_tokens, y.data(), w.rows, pool, isa);
        ASSERT_EQ(std::memcmp(y.data(), scalar.data(), y.size() * sizeof(float)), 0)
            << quant_kernel_isa_name(isa) << " on " << w.rows << "x" << w.cols << ", " << num_tokens
            << " tokens" << (has_direct_quant_kernel(dtype, isa) ? " (direct)" : "");
      }
    }
  }
}

// The branch-free half conversion the unpacking uses equals dtype.h's for all 65536 halves.
TEST(QuantDot, HalfToFloatMatchesForEveryHalf) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float a = half_to_float(static_cast<uint16_t>(h));
    const float b = f16_to_f32(static_cast<uint16_t>(h));
    ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0) << "half 0x" << std::hex << h;
  }
}

TEST(QuantDot, RefusesTypesWithoutKernels) {
  const float x[32] = {};
  EXPECT_THROW(quant_dot(DType::F16, x, x, 32, QuantKernelIsa::Scalar), Error);
  EXPECT_THROW(quant_dot(DType::Q4_K, x, x, 32, QuantKernelIsa::Scalar), Error);  // 32 < 256
}

}  // namespace
}  // namespace sluice
