// gemm_nt_fixed_order: every output element is summed in the order cpu_gemm.h documents (checked
// against that order written out one element at a time), by every instruction set this CPU runs,
// for fp32 and for 16-bit weights widened in registers.
#include "engine/backend/cpu/cpu_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/core/error.h"

namespace sluice {
namespace {

// The documented order, one element at a time: sixteen lanes from +0, lane l taking k = l, l + 16,
// ... with one fused multiply-add each, zeros past cols up to a multiple of 16, then lanes l and
// l + 8 added, l and l + 4, l and l + 2, l and l + 1.
float documented_sum(const float* x, const float* w, int64_t cols) {
  float lanes[16] = {};
  const int64_t padded = (cols + 15) / 16 * 16;
  for (int64_t k = 0; k < padded; ++k) {
    const float xk = k < cols ? x[k] : 0.0f;
    const float wk = k < cols ? w[k] : 0.0f;
    lanes[k % 16] = std::fma(xk, wk, lanes[k % 16]);
  }
  for (int width = 8; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] = lanes[l] + lanes[l + width];
  }
  return lanes[0];
}

std::vector<float> random_floats(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> out(static_cast<size_t>(n));
  for (float& v : out) v = uniform(rng);
  return out;
}

// Weights stored as dtype, and their exact fp32 values.
struct StoredWeights {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};

StoredWeights store(const std::vector<float>& w, DType dtype) {
  StoredWeights out;
  out.bytes.resize(dtype_num_bytes(dtype, static_cast<int64_t>(w.size())));
  out.values.resize(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    if (dtype == DType::F32) {
      out.values[i] = w[i];
      std::memcpy(out.bytes.data() + 4 * i, &w[i], 4);
      continue;
    }
    const uint16_t h = dtype == DType::F16 ? f32_to_f16(w[i]) : f32_to_bf16(w[i]);
    out.values[i] = dtype == DType::F16 ? f16_to_f32(h) : bf16_to_f32(h);
    std::memcpy(out.bytes.data() + 2 * i, &h, 2);
  }
  return out;
}

std::string isa_label(CpuKernelIsa isa) {
  return cpu_kernel_isa_name(isa);
}

// Shapes with every tail: tokens past the 4-token tiles (pairs and single tokens left), rows
// around the 3-, 4-, 8- and 16-row tiles, cols around the 16 lanes, the real layers' widths (64,
// 172, 288), and past the AVX2 wide tile's 512-column chunks (600 with a tail, 1040 without).
constexpr int64_t kTokenCounts[] = {1, 2, 3, 4, 5, 6, 7, 9};
constexpr int64_t kRowCounts[] = {1, 3, 4, 5, 8, 9, 16, 17, 33};
constexpr int64_t kColCounts[] = {1, 7, 15, 16, 17, 64, 172, 288, 600, 1040};

TEST(CpuGemm, EveryInstructionSetWithFmaSumsInTheDocumentedOrder) {
  std::mt19937 rng(21);
  for (const CpuKernelIsa isa : runnable_cpu_kernel_isas()) {
    if (isa == CpuKernelIsa::kPortable) continue;  // no FMA: checked against float64 below
    for (const DType dtype : {DType::F32, DType::F16, DType::BF16}) {
      for (const int64_t cols : kColCounts) {
        for (const int64_t num_rows : kRowCounts) {
          const int64_t num_tokens = kTokenCounts[(cols + num_rows) % std::size(kTokenCounts)];
          SCOPED_TRACE(str_cat(isa_label(isa), " ", dtype_name(dtype), " tokens ", num_tokens,
                               " rows ", num_rows, " cols ", cols));
          const std::vector<float> x = random_floats(num_tokens * cols, rng);
          const StoredWeights w = store(random_floats(num_rows * cols, rng), dtype);
          std::vector<float> y(static_cast<size_t>(num_tokens * num_rows));
          gemm_nt_fixed_order_with(isa, x.data(), num_tokens, dtype, w.bytes.data(), num_rows, cols,
                                   y.data(), num_rows);
          for (int64_t t = 0; t < num_tokens; ++t) {
            for (int64_t r = 0; r < num_rows; ++r) {
              const float expected =
                  documented_sum(x.data() + t * cols, w.values.data() + r * cols, cols);
              const float got = y[static_cast<size_t>(t * num_rows + r)];
              ASSERT_EQ(std::memcmp(&got, &expected, sizeof got), 0)
                  << "token " << t << " row " << r << ": " << got << " against " << expected;
            }
          }
        }
      }
    }
  }
}

TEST(CpuGemm, PortableKernelsAreCloseToFloat64) {
  std::mt19937 rng(22);
  for (const int64_t cols : kColCounts) {
    for (const int64_t num_rows : kRowCounts) {
      const int64_t num_tokens = kTokenCounts[(cols + num_rows) % std::size(kTokenCounts)];
      const std::vector<float> x = random_floats(num_tokens * cols, rng);
      const std::vector<float> w = random_floats(num_rows * cols, rng);
      std::vector<float> y(static_cast<size_t>(num_tokens * num_rows));
      gemm_nt_fixed_order_with(CpuKernelIsa::kPortable, x.data(), num_tokens, DType::F32, w.data(),
                               num_rows, cols, y.data(), num_rows);
      for (int64_t t = 0; t < num_tokens; ++t) {
        for (int64_t r = 0; r < num_rows; ++r) {
          double expected = 0.0, magnitude = 0.0;
          for (int64_t k = 0; k < cols; ++k) {
            const double p = static_cast<double>(x[static_cast<size_t>(t * cols + k)]) *
                             w[static_cast<size_t>(r * cols + k)];
            expected += p;
            magnitude += std::abs(p);
          }
          // Each lane sums at most cols / 16 + 1 rounded products, then four tree levels: a
          // relative error of a few times 2^-24 per term, far below 1e-6 of the magnitude.
          ASSERT_NEAR(y[static_cast<size_t>(t * num_rows + r)], expected, 1e-6 * magnitude)
              << "tokens " << num_tokens << " rows " << num_rows << " cols " << cols;
        }
      }
    }
  }
}

// Each element's bits come from its two input rows alone: the same product computed whole and
// as blocks of tokens and rows at odd offsets (as threads and batches cut it) is equal bit for
// bit, with every instruction set.
TEST(CpuGemm, AnElementDoesNotDependOnTheTokensAndRowsComputedWithIt) {
  std::mt19937 rng(23);
  constexpr int64_t kTokens = 23, kRows = 70, kCols = 172;
  const std::vector<float> x = random_floats(kTokens * kCols, rng);
  for (const DType dtype : {DType::F32, DType::F16, DType::BF16}) {
    const StoredWeights w = store(random_floats(kRows * kCols, rng), dtype);
    const size_t row_bytes = dtype_num_bytes(dtype, kCols);
    for (const CpuKernelIsa isa : runnable_cpu_kernel_isas()) {
      SCOPED_TRACE(str_cat(isa_label(isa), " ", dtype_name(dtype)));
      std::vector<float> whole(static_cast<size_t>(kTokens * kRows));
      gemm_nt_fixed_order_with(isa, x.data(), kTokens, dtype, w.bytes.data(), kRows, kCols,
                               whole.data(), kRows);
      for (const int64_t token_cut : {1, 3, 6, 17}) {
        for (const int64_t row_cut : {1, 5, 16, 37}) {
          std::vector<float> pieces(whole.size());
          for (const auto& [t0, t1] : {std::pair{int64_t{0}, token_cut}, {token_cut, kTokens}}) {
            for (const auto& [r0, r1] : {std::pair{int64_t{0}, row_cut}, {row_cut, kRows}}) {
              gemm_nt_fixed_order_with(isa, x.data() + t0 * kCols, t1 - t0, dtype,
                                       w.bytes.data() + static_cast<size_t>(r0) * row_bytes,
                                       r1 - r0, kCols, pieces.data() + t0 * kRows + r0, kRows);
            }
          }
          EXPECT_EQ(std::memcmp(whole.data(), pieces.data(), whole.size() * sizeof(float)), 0)
              << "tokens cut at " << token_cut << ", rows at " << row_cut;
        }
      }
    }
  }
}

// Every 16-bit pattern widens exactly as dtype.h's scalar conversions do (subnormals, the
// largest values, infinities, NaN), through the full-vector loads (16 columns) and the tail
// loads (1 column). The weight sits alone in its row against an input of 1, so the product is
// the weight itself (a negative zero comes out positive: the lanes start from +0).
TEST(CpuGemm, SixteenBitWeightsWidenExactly) {
  constexpr int64_t kPatterns = 65536;
  for (const DType dtype : {DType::F16, DType::BF16}) {
    for (const int64_t cols : {16, 1}) {
      const int64_t column = cols == 1 ? 0 : 5;
      std::vector<uint16_t> w(static_cast<size_t>(kPatterns * cols), 0);
      for (int64_t p = 0; p < kPatterns; ++p)
        w[static_cast<size_t>(p * cols + column)] = static_cast<uint16_t>(p);
      std::vector<float> x(static_cast<size_t>(cols), 0.0f);
      x[static_cast<size_t>(column)] = 1.0f;
      for (const CpuKernelIsa isa : runnable_cpu_kernel_isas()) {
        SCOPED_TRACE(str_cat(isa_label(isa), " ", dtype_name(dtype), " cols ", cols));
        std::vector<float> y(static_cast<size_t>(kPatterns));
        gemm_nt_fixed_order_with(isa, x.data(), 1, dtype, w.data(), kPatterns, cols, y.data(),
                                 kPatterns);
        for (int64_t p = 0; p < kPatterns; ++p) {
          const auto bits = static_cast<uint16_t>(p);
          const float expected = dtype == DType::F16 ? f16_to_f32(bits) : bf16_to_f32(bits);
          const float got = y[static_cast<size_t>(p)];
          if (std::isnan(expected)) {
            ASSERT_TRUE(std::isnan(got)) << "pattern " << p;
          } else {
            ASSERT_EQ(got, expected) << "pattern " << p;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace sluice
