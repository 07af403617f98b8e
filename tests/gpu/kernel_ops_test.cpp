// The small CUDA ops (embedding, RMSNorm + residual, SiLU-mul, bias, row gather, conversions,
// copy-on-write of KV blocks) against the CPU backend's reference code, for float, bf16 and
// fp16, on odd sizes (RoPE + cache write: rope_cache_kernel_test.cpp). Tolerances
// (|gpu - ref| <= tol * (1 + |ref|)): 1e-4 for float, 2e-2 for bf16 and fp16 (their own rounding
// is 4e-3 and 5e-4 relative). Copies, conversions and dequantization are compared bit for bit.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/backend/cpu/cpu_ops.h"
#include "engine/core/dtype.h"
#include "engine/core/quant_blocks.h"
#include "kernels/block_copy.cuh"
#include "kernels/dequantize.cuh"
#include "kernels/elementwise.cuh"
#include "kernels/embedding.cuh"
#include "kernels/rms_norm.cuh"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/kernel_test_support.h"

namespace sluice {
namespace {

using namespace kernel_test;  // NOLINT: the shared helpers of the kernel tests

template <typename T>
class KernelOps : public ::testing::Test {};

TYPED_TEST_SUITE(KernelOps, ElementTypes, ElementTypeNames);

constexpr int kHiddenSizes[] = {64, 4096, 3584, 1000, 1001};
constexpr int kOpsTokenCounts[] = {1, 7, 256};

TYPED_TEST(KernelOps, EmbeddingGatherCopiesRowsAndZeroesOutOfRangeIds) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  const int vocab_size = 512;
  for (const int hidden_size : kHiddenSizes) {
    for (const int num_tokens : kOpsTokenCounts) {
      SCOPED_TRACE("hidden " + std::to_string(hidden_size) + ", tokens " +
                   std::to_string(num_tokens));
      const auto table = random_storage<T>(static_cast<size_t>(vocab_size) * hidden_size,
                                           static_cast<uint32_t>(hidden_size + num_tokens));
      std::mt19937 rng(7);
      std::vector<int32_t> ids(static_cast<size_t>(num_tokens));
      for (int32_t& id : ids) id = static_cast<int32_t>(rng() % vocab_size);
      if (num_tokens >= 7) {
        ids[1] = -1;
        ids[3] = vocab_size;
        ids[5] = vocab_size - 1;
      }
      DeviceBuffer<Storage<T>> d_table(table);
      DeviceBuffer<int32_t> d_ids(ids);
      DeviceBuffer<Storage<T>> d_out(static_cast<size_t>(num_tokens) * hidden_size);
      expect_ok(kernels::embedding_gather<T>(device_ptr<T>(d_table), d_ids.get(),
                                             device_ptr<T>(d_out), num_tokens, hidden_size,
                                             vocab_size, /*scale=*/1.0f, nullptr));
      std::vector<Storage<T>> expected(d_out.size(), ElementTraits<T>::from_float(0.0f));
      for (int t = 0; t < num_tokens; ++t) {
        const int32_t id = ids[static_cast<size_t>(t)];
        if (id < 0 || id >= vocab_size) continue;
        std::copy_n(table.begin() + static_cast<ptrdiff_t>(id) * hidden_size, hidden_size,
                    expected.begin() + static_cast<ptrdiff_t>(t) * hidden_size);
      }
      expect_same_bits(d_out.download(), expected, "embedding");
    }
  }
}

TYPED_TEST(KernelOps, RmsNormResidualMatchesCpuRmsNorm) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  const float eps = 1e-5f;
  for (const int hidden_size : kHiddenSizes) {
    for (const int num_tokens : kOpsTokenCounts) {
      for (const bool has_residual : {true, false}) {
        SCOPED_TRACE("hidden " + std::to_string(hidden_size) + ", tokens " +
                     std::to_string(num_tokens) + (has_residual ? ", residual" : ""));
        const size_t n = static_cast<size_t>(num_tokens) * hidden_size;
        const auto x = random_storage<T>(n, 11 + static_cast<uint32_t>(hidden_size));
        const auto residual = random_storage<T>(n, 12 + static_cast<uint32_t>(num_tokens));
        const auto weight = random_values(static_cast<size_t>(hidden_size), 13, 0.5f, 1.5f);

        // Reference: the sum rounded to T (what residual_out stores), then the CPU RMSNorm of it.
        std::vector<float> sum = to_floats<T>(x);
        if (has_residual) {
          const auto residual_f = to_floats<T>(residual);
          for (size_t i = 0; i < n; ++i) sum[i] += residual_f[i];
        }
        const auto expected_residual = to_storage<T>(sum);
        const auto rounded_sum = to_floats<T>(expected_residual);
        std::vector<float> expected_out(n);
        rms_norm(rounded_sum.data(), weight.data(), eps, num_tokens, hidden_size,
                 expected_out.data());

        DeviceBuffer<Storage<T>> d_x(x), d_residual(residual), d_residual_out(n), d_out(n);
        DeviceBuffer<float> d_weight(weight);
        expect_ok(kernels::rms_norm_residual<T>(
            device_ptr<T>(d_x), has_residual ? device_ptr<T>(d_residual) : nullptr,
            device_ptr<T>(d_residual_out), d_weight.get(), eps, device_ptr<T>(d_out), num_tokens,
            hidden_size, nullptr));
        expect_same_bits(d_residual_out.download(), expected_residual, "residual_out");
        expect_close(to_floats<T>(d_out.download()), expected_out, ElementTraits<T>::kTolerance,
                     "out");

        // In place: residual_out is x (and residual_in, when there is one, is also updated in
        // place by a second call with residual_in == residual_out).
        expect_ok(kernels::rms_norm_residual<T>(
            device_ptr<T>(d_x), has_residual ? device_ptr<T>(d_residual) : nullptr,
            device_ptr<T>(d_x), d_weight.get(), eps, device_ptr<T>(d_out), num_tokens,
            hidden_size, nullptr));
        expect_same_bits(d_x.download(), expected_residual, "residual_out aliasing x");
        expect_close(to_floats<T>(d_out.download()), expected_out, ElementTraits<T>::kTolerance,
                     "out with aliasing");
      }
    }
  }
}

TYPED_TEST(KernelOps, SiluMulMatchesCpuInPlaceAndUnaligned) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  for (const int64_t n : {int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{4096 * 7 + 3}}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const auto gate = random_storage<T>(static_cast<size_t>(n), 21, -8.0f, 8.0f);
    const auto up = random_storage<T>(static_cast<size_t>(n), 22);
    std::vector<float> expected = to_floats<T>(gate);
    const std::vector<float> up_f = to_floats<T>(up);
    silu_mul(expected.data(), up_f.data(), n);

    DeviceBuffer<Storage<T>> d_gate(gate), d_up(up), d_out(static_cast<size_t>(n));
    expect_ok(kernels::silu_mul<T>(device_ptr<T>(d_gate), device_ptr<T>(d_up), device_ptr<T>(d_out),
                                   n, nullptr));
    expect_close(to_floats<T>(d_out.download()), expected, ElementTraits<T>::kTolerance, "out");

    // Misaligned by one element: the scalar path over n - 1 values.
    if (n > 1) {
      expect_ok(kernels::silu_mul<T>(device_ptr<T>(d_gate) + 1, device_ptr<T>(d_up) + 1,
                                     device_ptr<T>(d_out) + 1, n - 1, nullptr));
      expect_close(to_floats<T>(d_out.download()), expected, ElementTraits<T>::kTolerance,
                   "out (misaligned)");
    }
    // In place: out is gate.
    expect_ok(kernels::silu_mul<T>(device_ptr<T>(d_gate), device_ptr<T>(d_up),
                                   device_ptr<T>(d_gate), n, nullptr));
    expect_close(to_floats<T>(d_gate.download()), expected, ElementTraits<T>::kTolerance,
                 "gate (in place)");
  }
}

// The fused gate|up layout of the CUDA backend: silu(gate) * up written over the gate half of
// each row, the up half untouched.
TYPED_TEST(KernelOps, SiluMulRowsOverFusedGateUpRows) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  for (const int64_t cols : {int64_t{7}, int64_t{1000}, int64_t{1001}, int64_t{4096}}) {
    for (const int64_t rows : {int64_t{1}, int64_t{7}, int64_t{33}}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + ", cols " + std::to_string(cols));
      const auto gate_up = random_storage<T>(static_cast<size_t>(rows * 2 * cols),
                                             static_cast<uint32_t>(41 + rows + cols), -8.0f, 8.0f);
      const std::vector<float> in = to_floats<T>(gate_up);
      std::vector<float> expected = in;
      for (int64_t r = 0; r < rows; ++r) {
        float* row = expected.data() + r * 2 * cols;
        silu_mul(row, row + cols, cols);
      }
      DeviceBuffer<Storage<T>> d_gate_up(gate_up);
      T* base = device_ptr<T>(d_gate_up);
      expect_ok(kernels::silu_mul_rows<T>(base, base + cols, base, rows, cols, 2 * cols, nullptr));
      const auto out = d_gate_up.download();
      expect_close(to_floats<T>(out), expected, ElementTraits<T>::kTolerance, "gate|up rows");
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          const auto i = static_cast<size_t>(r * 2 * cols + cols + c);
          ASSERT_EQ(std::memcmp(&out[i], &gate_up[i], sizeof(out[i])), 0)
              << "up changed at row " << r;
        }
      }
    }
  }
  // A stride shorter than a row is refused.
  DeviceBuffer<Storage<T>> d_small(std::vector<Storage<T>>(64));
  EXPECT_NE(kernels::silu_mul_rows<T>(device_ptr<T>(d_small), device_ptr<T>(d_small) + 8,
                                      device_ptr<T>(d_small), 4, 8, 7, nullptr),
            kernels::kKernelOk);
}

TYPED_TEST(KernelOps, AddBiasMatchesCpu) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  for (const int dim : {64, 1000, 3584, 1001}) {
    for (const int num_tokens : kOpsTokenCounts) {
      SCOPED_TRACE("dim " + std::to_string(dim) + ", tokens " + std::to_string(num_tokens));
      const size_t n = static_cast<size_t>(num_tokens) * dim;
      const auto x = random_storage<T>(n, 31 + static_cast<uint32_t>(dim));
      const auto bias = random_values(static_cast<size_t>(dim), 32, -1.0f, 1.0f);
      std::vector<float> expected = to_floats<T>(x);
      add_bias(expected.data(), bias.data(), num_tokens, dim);

      DeviceBuffer<Storage<T>> d_x(x);
      DeviceBuffer<float> d_bias(bias);
      expect_ok(kernels::add_bias<T>(device_ptr<T>(d_x), d_bias.get(), num_tokens, dim, nullptr));
      expect_close(to_floats<T>(d_x.download()), expected, ElementTraits<T>::kTolerance, "x");
    }
  }
}

TYPED_TEST(KernelOps, GatherRowsCopiesTheListedRows) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  const int num_in_rows = 300;
  for (const int dim : {64, 1000, 1001, 4096}) {
    for (const int num_rows : kOpsTokenCounts) {
      SCOPED_TRACE("dim " + std::to_string(dim) + ", rows " + std::to_string(num_rows));
      const auto in = random_storage<T>(static_cast<size_t>(num_in_rows) * dim, 41);
      std::mt19937 rng(42);
      std::vector<int32_t> rows(static_cast<size_t>(num_rows));
      for (int32_t& row : rows) row = static_cast<int32_t>(rng() % num_in_rows);
      DeviceBuffer<Storage<T>> d_in(in), d_out(static_cast<size_t>(num_rows) * dim);
      DeviceBuffer<int32_t> d_rows(rows);
      expect_ok(kernels::gather_rows<T>(device_ptr<T>(d_in), d_rows.get(), device_ptr<T>(d_out),
                                        num_rows, dim, nullptr));
      std::vector<Storage<T>> expected(d_out.size());
      for (int r = 0; r < num_rows; ++r) {
        std::copy_n(in.begin() + static_cast<ptrdiff_t>(rows[static_cast<size_t>(r)]) * dim, dim,
                    expected.begin() + static_cast<ptrdiff_t>(r) * dim);
      }
      expect_same_bits(d_out.download(), expected, "gathered rows");
    }
  }
}

// Random bit patterns of S (any value, NaN payloads included): copies must keep them all.
template <typename S>
std::vector<S> random_bits(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<S> values(n);
  for (S& value : values) {
    const uint32_t bits = rng();
    std::memcpy(&value, &bits, sizeof(S));
  }
  return values;
}

TYPED_TEST(KernelOps, CopyBlocksCopiesExactlyTheOrderedBlocksInEveryLayer) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  using S = Storage<T>;
  const int num_layers = 3;
  const int num_blocks = 12;
  const std::vector<int32_t> src = {1, 4, 7, 0};
  const std::vector<int32_t> dst = {9, 2, 11, 5};
  // 16 x 2 x 8 = 256 elements per block (packed path); 5 x 3 x 7 = 105 (element path).
  for (const int64_t block_elements : {int64_t{256}, int64_t{105}}) {
    SCOPED_TRACE("block_elements " + std::to_string(block_elements));
    const size_t layer_size = static_cast<size_t>(num_blocks * block_elements);
    std::vector<std::vector<S>> k_layers, v_layers;
    std::vector<std::unique_ptr<DeviceBuffer<S>>> d_layers;
    std::vector<T*> k_pointers, v_pointers;
    for (int layer = 0; layer < num_layers; ++layer) {
      k_layers.push_back(random_bits<S>(layer_size, static_cast<uint32_t>(100 + layer)));
      v_layers.push_back(random_bits<S>(layer_size, static_cast<uint32_t>(200 + layer)));
      d_layers.push_back(std::make_unique<DeviceBuffer<S>>(k_layers.back()));
      k_pointers.push_back(device_ptr<T>(*d_layers.back()));
      d_layers.push_back(std::make_unique<DeviceBuffer<S>>(v_layers.back()));
      v_pointers.push_back(device_ptr<T>(*d_layers.back()));
    }
    DeviceBuffer<T*> d_k_pointers(k_pointers), d_v_pointers(v_pointers);
    DeviceBuffer<int32_t> d_src(src), d_dst(dst);
    expect_ok(kernels::copy_blocks<T>(d_k_pointers.get(), d_v_pointers.get(), d_src.get(),
                                      d_dst.get(), static_cast<int>(src.size()), num_layers,
                                      block_elements, nullptr));
    for (int layer = 0; layer < num_layers; ++layer) {
      for (auto* layers : {&k_layers, &v_layers}) {
        std::vector<S>& expected = (*layers)[static_cast<size_t>(layer)];
        for (size_t c = 0; c < src.size(); ++c) {
          std::copy_n(expected.begin() + src[c] * block_elements, block_elements,
                      expected.begin() + dst[c] * block_elements);
        }
      }
      const size_t k_idx = 2 * static_cast<size_t>(layer);
      expect_same_bits(d_layers[k_idx]->download(), k_layers[static_cast<size_t>(layer)],
                       "k layer " + std::to_string(layer));
      expect_same_bits(d_layers[k_idx + 1]->download(), v_layers[static_cast<size_t>(layer)],
                       "v layer " + std::to_string(layer));
    }
  }
}

// ---- conversions -------------------------------------------------------------------------------

// Float bit patterns that exercise rounding: specials, the edges of half's range, subnormals of
// both formats, ties, and random patterns.
std::vector<float> conversion_inputs() {
  std::vector<float> values = {0.0f,      -0.0f,        1.0f,       -1.0f,      65504.0f,
                               65519.99f, 65520.0f,     -65520.0f,  1e-8f,      5.96e-8f,
                               2.98e-8f,  6.1e-5f,      1e30f,      -1e30f,     3.0e38f,
                               INFINITY,  -INFINITY,    1.00390625f, 1.01171875f, 1e-40f};
  std::mt19937 rng(99);
  while (values.size() < 65536 + 5) {
    const uint32_t bits = rng();
    float value;
    std::memcpy(&value, &bits, sizeof value);
    if (!std::isnan(value)) values.push_back(value);
  }
  values.push_back(NAN);
  return values;
}

// Runs convert<From, To> over in (aligned, then one element in, unaligned) and returns the output.
template <typename From, typename To>
std::vector<Storage<To>> run_convert(const std::vector<Storage<From>>& in, bool is_offset) {
  DeviceBuffer<Storage<From>> d_in(in);
  DeviceBuffer<Storage<To>> d_out(in.size());
  const int64_t offset = is_offset ? 1 : 0;
  const auto status = kernels::convert<From, To>(device_ptr<From>(d_in) + offset,
                                                 device_ptr<To>(d_out) + offset,
                                                 static_cast<int64_t>(in.size()) - offset, nullptr);
  EXPECT_EQ(status, kernels::kKernelOk);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto out = d_out.download();
  if (is_offset) out[0] = ElementTraits<To>::from_float(0.0f);
  return out;
}

// Narrowing float to To must round exactly as engine/core/dtype.h does; NaN stays NaN.
template <typename To>
void check_narrowing() {
  const std::vector<float> in = conversion_inputs();
  for (const bool is_offset : {false, true}) {
    const auto out = run_convert<float, To>(in, is_offset);
    int num_bad = 0;
    for (size_t i = is_offset ? 1 : 0; i < in.size(); ++i) {
      const bool is_good = std::isnan(in[i])
                               ? std::isnan(ElementTraits<To>::to_float(out[i]))
                               : out[i] == ElementTraits<To>::from_float(in[i]);
      if (!is_good && ++num_bad <= 5) {
        ADD_FAILURE() << "input " << in[i] << " converted to bits " << out[i];
      }
    }
    EXPECT_EQ(num_bad, 0);
  }
}

// Widening every 16-bit pattern to float must be exact; NaN stays NaN.
template <typename From>
void check_widening() {
  std::vector<uint16_t> in(65536 + 3);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint16_t>(i);
  for (const bool is_offset : {false, true}) {
    const auto out = run_convert<From, float>(in, is_offset);
    int num_bad = 0;
    for (size_t i = is_offset ? 1 : 0; i < in.size(); ++i) {
      const float expected = ElementTraits<From>::to_float(in[i]);
      const bool is_good = std::isnan(expected)
                               ? std::isnan(out[i])
                               : std::memcmp(&out[i], &expected, sizeof expected) == 0;
      if (!is_good && ++num_bad <= 5) ADD_FAILURE() << "bits " << in[i] << " gave " << out[i];
    }
    EXPECT_EQ(num_bad, 0);
  }
}

TEST(KernelOpsConvert, FloatToBf16RoundsLikeTheCpu) {
  SLUICE_REQUIRE_CUDA();
  check_narrowing<__nv_bfloat16>();
}

TEST(KernelOpsConvert, FloatToHalfRoundsLikeTheCpu) {
  SLUICE_REQUIRE_CUDA();
  check_narrowing<__half>();
}

TEST(KernelOpsConvert, Bf16ToFloatIsExactForEveryPattern) {
  SLUICE_REQUIRE_CUDA();
  check_widening<__nv_bfloat16>();
}

TEST(KernelOpsConvert, HalfToFloatIsExactForEveryPattern) {
  SLUICE_REQUIRE_CUDA();
  check_widening<__half>();
}

TEST(KernelOpsConvert, FloatToFloatCopies) {
  SLUICE_REQUIRE_CUDA();
  const std::vector<float> in = conversion_inputs();
  for (const bool is_offset : {false, true}) {
    auto out = run_convert<float, float>(in, is_offset);
    std::vector<float> expected = in;
    if (is_offset) expected[0] = 0.0f;
    expect_same_bits(out, expected, "float copy");
  }
}

}  // namespace
}  // namespace sluice
