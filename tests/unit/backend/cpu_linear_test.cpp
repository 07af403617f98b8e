// CpuMatrix::multiply: correct against a double-precision reference, and bit-identical for a
// token whatever else is in the batch (how many tokens, which split across threads) — the CPU
// backend's promise that a row's output never depends on the batch it ran in.
#include "engine/backend/cpu/cpu_linear.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/core/error.h"
#include "engine/core/thread_pool.h"

namespace sluice {
namespace {

struct Matrix {
  std::vector<uint8_t> bytes;
  WeightTensor tensor;
};

// Random weights of a shape, stored as dtype (F32, F16, BF16, or Q8_0 with cols a multiple of
// 32).
Matrix random_matrix(int64_t rows, int64_t cols, DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Matrix m;
  m.bytes.resize(dtype_num_bytes(dtype, rows * cols));
  if (dtype == DType::Q8_0) {
    std::uniform_int_distribution<int> quant(-127, 127);
    for (size_t b = 0; b < m.bytes.size(); b += kQ8_0BlockBytes) {
      const uint16_t scale = f32_to_f16(0.01f * (1.0f + uniform(rng)));
      std::memcpy(m.bytes.data() + b, &scale, 2);
      for (int i = 0; i < kQ8_0BlockSize; ++i)
        m.bytes[b + 2 + static_cast<size_t>(i)] = static_cast<uint8_t>(quant(rng));
    }
  } else {
    for (int64_t i = 0; i < rows * cols; ++i) {
      const float v = uniform(rng);
      if (dtype == DType::F32) {
        std::memcpy(m.bytes.data() + 4 * i, &v, 4);
      } else {
        const uint16_t h = dtype == DType::F16 ? f32_to_f16(v) : f32_to_bf16(v);
        std::memcpy(m.bytes.data() + 2 * i, &h, 2);
      }
    }
  }
  m.tensor.dtype = dtype;
  m.tensor.shape = {rows, cols};
  m.tensor.data = m.bytes.data();
  m.tensor.num_bytes = m.bytes.size();
  return m;
}

std::vector<float> random_inputs(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> out(static_cast<size_t>(n));
  for (float& v : out) v = uniform(rng);
  return out;
}

struct Shape {
  int64_t rows, cols;
};

// Shapes of real layers (stories260K: 64 -> 172, 512; stories15M: 288 -> 768, 32000 rows cut
// to 1000) and odd ones that leave tails in every direction.
constexpr Shape kShapes[] = {{64, 64},   {172, 64},  {64, 172},   {512, 64},
                             {768, 288}, {37, 1001}, {1000, 288}, {5, 3}};
constexpr int64_t kTokens = 300;

TEST(CpuLinear, MatchesDoublePrecisionReference) {
  ThreadPool pool(2);
  for (const Shape& s : kShapes) {
    for (const DType dtype : {DType::F32, DType::F16, DType::BF16}) {
      SCOPED_TRACE(str_cat(s.rows, "x", s.cols, " ", dtype_name(dtype)));
      const Matrix w = random_matrix(s.rows, s.cols, dtype, 7);
      const CpuMatrix m(w.tensor);
      const std::vector<float> x = random_inputs(kTokens * s.cols, 11);
      std::vector<float> y(static_cast<size_t>(kTokens * s.rows));
      m.multiply(x.data(), kTokens, y.data(), pool);
      std::vector<float> row(static_cast<size_t>(s.cols));
      for (int64_t r = 0; r < s.rows; ++r) {
        m.row(r, row.data());
        for (int64_t t = 0; t < kTokens; t += 13) {
          double expected = 0.0, magnitude = 0.0;
          for (int64_t k = 0; k < s.cols; ++k) {
            expected += static_cast<double>(x[static_cast<size_t>(t * s.cols + k)]) *
                        row[static_cast<size_t>(k)];
            magnitude += std::abs(static_cast<double>(x[static_cast<size_t>(t * s.cols + k)]) *
                                  row[static_cast<size_t>(k)]);
          }
          ASSERT_NEAR(y[static_cast<size_t>(t * s.rows + r)], expected, 1e-6 * magnitude + 1e-7)
              << "token " << t << " row " << r;
        }
      }
    }
  }
}

// The same 300 tokens multiplied all at once, in batches of every size the scheduler may form,
// and with one or two threads: every output element has the same bits. F32, F16 and BF16 weights
// are multiplied in place, Q8_0 weights by the quantized GEMM on their blocks.
TEST(CpuLinear, ATokensOutputDoesNotDependOnTheBatchOrTheThreads) {
  ThreadPool one(1), two(2);
  for (const Shape& s : kShapes) {
    for (const DType dtype : {DType::F32, DType::F16, DType::BF16, DType::Q8_0}) {
      if (dtype == DType::Q8_0 && s.cols % kQ8_0BlockSize != 0) continue;
      {
        SCOPED_TRACE(str_cat(s.rows, "x", s.cols, " ", dtype_name(dtype)));
        const Matrix w = random_matrix(s.rows, s.cols, dtype, 3);
        const CpuMatrix m(w.tensor);
        const std::vector<float> x = random_inputs(kTokens * s.cols, 5);
        std::vector<float> whole(static_cast<size_t>(kTokens * s.rows));
        m.multiply(x.data(), kTokens, whole.data(), two);
        for (ThreadPool* pool : {&one, &two}) {
          for (const int64_t batch : {1, 2, 3, 5, 7, 8, 17, 64, 255}) {
            std::vector<float> pieces(whole.size());
            for (int64_t t0 = 0; t0 < kTokens; t0 += batch) {
              const int64_t n = std::min(batch, kTokens - t0);
              m.multiply(x.data() + t0 * s.cols, n, pieces.data() + t0 * s.rows, *pool);
            }
            size_t num_differ = 0, first = 0;
            for (size_t i = 0; i < whole.size(); ++i) {
              if (std::memcmp(&whole[i], &pieces[i], sizeof(float)) != 0 && num_differ++ == 0)
                first = i;
            }
            EXPECT_EQ(num_differ, 0u)
                << "batches of " << batch << " on " << pool->num_threads()
                << " threads: first at token " << first / static_cast<size_t>(s.rows)
                << ", feature " << first % static_cast<size_t>(s.rows);
          }
        }
      }
    }
  }
}

// F16 and BF16 weights stay 16-bit: nothing is widened at load.
TEST(CpuLinear, SixteenBitWeightsAreNotWidenedAtLoad) {
  for (const DType dtype : {DType::F16, DType::BF16}) {
    const Matrix w = random_matrix(172, 64, dtype, 9);
    const CpuMatrix m(w.tensor);
    EXPECT_EQ(m.owned_bytes(), 0u) << dtype_name(dtype);
  }
}

// A float-type weight at an odd address in its file is copied once, as it is (its own bytes,
// not an fp32 widening), and its products are the aligned weight's, bit for bit.
TEST(CpuLinear, AMisalignedWeightIsCopiedAsStoredAndGivesTheSameProducts) {
  ThreadPool pool(2);
  for (const DType dtype : {DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const Matrix w = random_matrix(37, 1001, dtype, 21);
    std::vector<uint8_t> shifted(w.bytes.size() + 1);
    std::memcpy(shifted.data() + 1, w.bytes.data(), w.bytes.size());
    WeightTensor odd = w.tensor;
    odd.data = shifted.data() + 1;
    const CpuMatrix aligned(w.tensor), copied(odd);
    EXPECT_EQ(aligned.owned_bytes(), 0u);
    EXPECT_GE(copied.owned_bytes(), w.bytes.size());
    EXPECT_LT(copied.owned_bytes(), w.bytes.size() + sizeof(float));
    const std::vector<float> x = random_inputs(5 * 1001, 23);
    std::vector<float> y_aligned(5 * 37), y_copied(5 * 37);
    aligned.multiply(x.data(), 5, y_aligned.data(), pool);
    copied.multiply(x.data(), 5, y_copied.data(), pool);
    EXPECT_EQ(std::memcmp(y_aligned.data(), y_copied.data(), y_aligned.size() * sizeof(float)), 0);
  }
}

// A 16-bit weight's product is the fp32 product of its widened value, bit for bit: widening is
// exact (every F16 and BF16 value is an fp32 value) and both run the same summation order, so the
// bound is zero, not a tolerance.
TEST(CpuLinear, SixteenBitProductsEqualTheFp32ProductsOfTheWidenedWeights) {
  ThreadPool pool(2);
  for (const Shape& s : kShapes) {
    for (const DType dtype : {DType::F16, DType::BF16}) {
      SCOPED_TRACE(str_cat(s.rows, "x", s.cols, " ", dtype_name(dtype)));
      const Matrix w16 = random_matrix(s.rows, s.cols, dtype, 13);
      Matrix w32;
      w32.bytes.resize(static_cast<size_t>(s.rows * s.cols) * sizeof(float));
      dequantize_row(dtype, w16.bytes.data(), reinterpret_cast<float*>(w32.bytes.data()),
                     s.rows * s.cols);
      w32.tensor = w16.tensor;
      w32.tensor.dtype = DType::F32;
      w32.tensor.data = w32.bytes.data();
      w32.tensor.num_bytes = w32.bytes.size();
      const CpuMatrix m16(w16.tensor), m32(w32.tensor);
      for (const int64_t num_tokens : {int64_t{1}, int64_t{7}, kTokens}) {
        const std::vector<float> x = random_inputs(num_tokens * s.cols, 17);
        std::vector<float> y16(static_cast<size_t>(num_tokens * s.rows)), y32(y16.size());
        m16.multiply(x.data(), num_tokens, y16.data(), pool);
        m32.multiply(x.data(), num_tokens, y32.data(), pool);
        EXPECT_EQ(std::memcmp(y16.data(), y32.data(), y16.size() * sizeof(float)), 0)
            << num_tokens << " tokens";
      }
    }
  }
}

}  // namespace
}  // namespace sluice
