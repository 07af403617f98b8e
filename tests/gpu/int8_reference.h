// What the tests of the integer products (quant_gemv_int8_test.cpp, quant_mmq_test.cpp) share:
// random weights in every format the kernels have with their values from the CPU's
// dequantize_row (bit-exact with llama.cpp), the activations quantized as the kernels quantize
// them, and the check of a product against the double-precision one of the two.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/core/dtype.h"
#include "kernels/quant_gemv_int8.cuh"
#include "tests/gpu/kernel_test_support.h"

namespace sluice::int8_reference {

using kernel_test::random_blocks;

// The activations as the kernel quantizes them: per 32 values d = max |x| / 127, q = rint(x / d).
struct QuantizedRows {
  std::vector<int8_t> q;   // [tokens, cols]
  std::vector<float> d;    // [tokens, cols / 32]
  std::vector<float> sum;  // [tokens, cols / 32]: d * sum(q)
};

inline QuantizedRows quantize_like_the_kernel(const std::vector<float>& x, int tokens, int cols,
                                              int stride) {
  QuantizedRows out;
  out.q.resize(static_cast<size_t>(tokens) * cols);
  for (int t = 0; t < tokens; ++t) {
    for (int b = 0; b < cols / 32; ++b) {
      const float* v = x.data() + static_cast<size_t>(t) * stride + 32 * b;
      float amax = 0.0f;
      for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(v[j]));
      const float d = amax / 127.0f;
      const float inv = d > 0.0f ? 1.0f / d : 0.0f;
      int sum = 0;
      for (int j = 0; j < 32; ++j) {
        const int q = static_cast<int>(std::rint(v[j] * inv));
        out.q[static_cast<size_t>(t) * cols + 32 * b + j] = static_cast<int8_t>(q);
        sum += q;
      }
      out.d.push_back(d);
      out.sum.push_back(d * static_cast<float>(sum));
    }
  }
  return out;
}

struct Weight {
  kernels::QuantFormat format;
  std::string name;
  std::vector<uint8_t> bytes;
  size_t row_bytes = 0;
  std::vector<float> values;  // [rows, cols]
};

inline Weight make_weight(DType dtype, int rows, int cols, uint32_t seed) {
  const DTypeTraits& traits = dtype_traits(dtype);
  Weight w{static_cast<kernels::QuantFormat>(traits.ggml_type), traits.name, {}, 0, {}};
  w.row_bytes = dtype_num_bytes(dtype, cols);
  w.bytes = random_blocks(dtype, rows * cols / traits.block_elements, seed, -14.0f, -8.0f);
  w.values.resize(static_cast<size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r)
    dequantize_row(dtype, w.bytes.data() + r * w.row_bytes, w.values.data() + r * cols, cols);
  return w;
}

inline const DType kInt8Formats[] = {DType::Q8_0, DType::Q4_0, DType::Q4_1,
                                     DType::Q5_0, DType::Q5_1, DType::Q4_K,
                                     DType::Q5_K, DType::Q6_K, DType::MXFP4};

// Checks y ([tokens, y_stride], columns past `rows` holding `sentinel`) against the
// double-precision product of w's values and the quantized activations: within fp32 sums'
// roundoff over sum |w x| plus Y's rounding.
template <typename Y>
void expect_int8_products(const Weight& w, const QuantizedRows& ref, const std::vector<float>& y,
                          int rows, int cols, int tokens, int y_stride, float sentinel) {
  const double eps = 1e-5 + (std::is_same_v<Y, float>    ? 0.0
                             : std::is_same_v<Y, __half> ? std::ldexp(1.0, -11)
                                                         : std::ldexp(1.0, -8));
  int misses = 0;
  for (int t = 0; t < tokens; ++t) {
    for (int c = 0; c < y_stride; ++c) {
      const float got = y[static_cast<size_t>(t) * y_stride + c];
      if (c >= rows) {
        EXPECT_EQ(got, sentinel) << "token " << t << ", column " << c << " past the rows";
        continue;
      }
      double exact = 0.0, magnitude = 0.0;
      for (int k = 0; k < cols; ++k) {
        const double xq = static_cast<double>(ref.q[static_cast<size_t>(t) * cols + k]) *
                          ref.d[static_cast<size_t>(t) * (cols / 32) + k / 32];
        const double p = static_cast<double>(w.values[static_cast<size_t>(c) * cols + k]) * xq;
        exact += p;
        magnitude += std::fabs(p);
      }
      if (!(std::fabs(got - exact) <= eps * magnitude + 1e-30) && ++misses <= 5) {
        ADD_FAILURE() << "token " << t << ", row " << c << ": " << got << " vs " << exact
                      << " (bound " << eps * magnitude << ")";
      }
    }
  }
}

}  // namespace sluice::int8_reference
