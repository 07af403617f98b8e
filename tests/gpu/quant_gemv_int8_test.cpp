// The integer GEMV (kernels/quant_gemv_int8.cuh): every format it has, in every activation type,
// with 1, 5 and 16 tokens (and 8 and 9 on a GPU: the second pass over a row's tokens) and row
// counts that are not a multiple of a thread block's, against the product in double precision of
// the CPU's dequantize_row (bit-exact with llama.cpp) and the activations quantized as the kernel
// quantizes them (8 bits per value, a float scale per 32). The quantization itself bit for bit,
// fp32 outputs from 16-bit activations, outputs into a column range of wider rows, the formats it
// lacks and refused arguments; a norm's and a gated activation's launches that also quantize
// their output; the grouped launch of a mixture-of-experts layer against one
// launch per expert.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/dtype.h"
#include "kernels/elementwise.cuh"
#include "kernels/quant_gemv_int8.cuh"
#include "kernels/rms_norm.cuh"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/int8_reference.h"
#include "tests/gpu/kernel_test_support.h"

namespace sluice {
namespace {

using namespace kernel_test;     // NOLINT: the shared helpers of the kernel tests
using namespace int8_reference;  // NOLINT: the integer products' references
using kernels::GatedActivation;

template <typename T>
class QuantGemvInt8 : public ::testing::Test {};
TYPED_TEST_SUITE(QuantGemvInt8, ElementTypes, ElementTypeNames);

// Runs the quantization and the GEMV on the device (x rows x_stride apart, y rows y_stride apart,
// columns past `rows` holding a sentinel) and checks the quantized activations bit for bit and
// every output against the double-precision product of the dequantized weights and the quantized
// activations: within fp32 sums' roundoff over sum |w x| plus Y's rounding.
template <typename T, typename Y>
void check_gemv(const Weight& w, int rows, int cols, int tokens, int x_stride, int y_stride,
                uint32_t seed,
                kernels::QuantGemvVariant variant = kernels::kDefaultQuantGemvVariant) {
  SCOPED_TRACE(w.name + ": " + std::to_string(rows) + " x " + std::to_string(cols) + ", " +
               std::to_string(tokens) + " tokens");
  const auto x = random_storage<T>(static_cast<size_t>(tokens) * x_stride, seed, -1.0f, 1.0f);
  const std::vector<float> xf = to_floats<T>(x);
  const QuantizedRows ref = quantize_like_the_kernel(xf, tokens, cols, x_stride);
  constexpr float kSentinel = -4096.0f;
  DeviceBuffer<uint8_t> d_w(w.bytes);
  DeviceBuffer<Storage<T>> d_x(x);
  DeviceBuffer<uint8_t> d_q8(std::vector<uint8_t>(kernels::q8_rows_bytes(tokens, cols)));
  DeviceBuffer<Storage<Y>> d_y(
      to_storage<Y>(std::vector<float>(static_cast<size_t>(tokens) * y_stride, kSentinel)));
  const kernels::Q8Rows q8 = kernels::q8_rows_in(d_q8.get(), tokens, cols);
  expect_ok(kernels::quantize_q8_rows<T>(device_ptr<T>(d_x), x_stride, q8, nullptr));
  expect_ok(kernels::quant_gemv_int8_variant<Y>(w.format, d_w.get(), w.row_bytes, rows, q8,
                                                device_ptr<Y>(d_y), y_stride, variant, nullptr));

  const std::vector<uint8_t> q8_bytes = d_q8.download();
  EXPECT_EQ(std::memcmp(q8_bytes.data(), ref.q.data(), ref.q.size()), 0) << "quantized values";
  std::vector<kernels::Q8Scale> scales(ref.d.size());
  std::memcpy(scales.data(),
              q8_bytes.data() + (reinterpret_cast<const uint8_t*>(q8.scales) -
                                 reinterpret_cast<const uint8_t*>(q8.qs)),
              scales.size() * sizeof(kernels::Q8Scale));
  for (size_t i = 0; i < scales.size(); ++i) {
    ASSERT_EQ(scales[i].d, ref.d[i]) << "scale " << i;
    ASSERT_EQ(scales[i].d_sum, ref.sum[i]) << "scaled sum " << i;
  }

  expect_int8_products<Y>(w, ref, to_floats<Y>(d_y.download()), rows, cols, tokens, y_stride,
                          kSentinel);
}

TYPED_TEST(QuantGemvInt8, EveryFormatMatchesTheProductOfTheQuantizedActivations) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  const std::vector<int> token_counts =
      test::kIsEmulated ? std::vector<int>{1, 5, 16} : std::vector<int>{1, 5, 8, 9, 16};
  for (const DType dtype : kInt8Formats) {
    ASSERT_TRUE(
        kernels::has_int8_gemv(static_cast<kernels::QuantFormat>(dtype_traits(dtype).ggml_type)));
    // Three super-blocks per row for the K formats, 24 blocks for the others: a warp's lanes
    // take a second, partial pass over the row's blocks.
    const int cols = dtype_traits(dtype).block_elements == 256 ? 768 : 768 + 32;
    const int rows = test::kIsEmulated ? 13 : 133;
    const Weight w = make_weight(dtype, rows, cols, static_cast<uint32_t>(dtype) * 7 + 3);
    for (const int tokens : token_counts)
      check_gemv<T, T>(w, rows, cols, tokens, cols, rows, 100 + tokens);
    // 17 super-blocks or 137 blocks: each lane unpacks four blocks before it multiplies (128 a
    // warp), then the rest one at a time.
    const int long_cols = dtype_traits(dtype).block_elements == 256 ? 17 * 256 : 137 * 32;
    const Weight long_w = make_weight(dtype, 5, long_cols, static_cast<uint32_t>(dtype) * 7 + 4);
    check_gemv<T, T>(long_w, 5, long_cols, 3, long_cols, 5, 300);
  }
}

// Every way of spreading a row (sluice_kernel_bench's variants) computes the same products: rows
// that leave a thread block's last row team short, a row whose blocks leave some lanes of the
// team without any, 1 token (a pass of its own) and 11 (two passes).
TEST(QuantGemvInt8Variants, EveryVariantMatchesTheProduct) {
  SLUICE_REQUIRE_CUDA();
  const kernels::QuantGemvVariant variants[] = {{1, 1, 1}, {2, 1, 1}, {4, 1, 1}, {1, 2, 1},
                                                {2, 2, 1}, {1, 4, 1}, {1, 1, 2}, {2, 1, 2}};
  for (const DType dtype : {DType::Q4_K, DType::Q6_K, DType::Q8_0}) {
    const int cols = dtype == DType::Q8_0 ? 137 * 32 : 17 * 256;
    const Weight w = make_weight(dtype, 7, cols, static_cast<uint32_t>(dtype) + 50);
    for (const auto& v : variants) {
      SCOPED_TRACE("unroll " + std::to_string(v.unroll) + ", split " + std::to_string(v.split) +
                   ", rows " + std::to_string(v.rows));
      for (const int tokens : {1, 11})
        check_gemv<__nv_bfloat16, __nv_bfloat16>(w, 7, cols, tokens, cols, 7, 400 + tokens, v);
    }
  }
  // A variant that only the default has elsewhere is refused, not run.
  const Weight q4_0 = make_weight(DType::Q4_0, 4, 64, 9);
  DeviceBuffer<uint8_t> d_q8(std::vector<uint8_t>(kernels::q8_rows_bytes(1, 64)));
  DeviceBuffer<Storage<__nv_bfloat16>> d_y(std::vector<Storage<__nv_bfloat16>>(4));
  EXPECT_NE(kernels::quant_gemv_int8_variant<__nv_bfloat16>(
                q4_0.format, nullptr, q4_0.row_bytes, 4, kernels::q8_rows_in(d_q8.get(), 1, 64),
                device_ptr<__nv_bfloat16>(d_y), 4, kernels::QuantGemvVariant{2, 2, 1}, nullptr),
            kernels::kKernelOk);
}

// The norm with its output quantized in the same launch (rms_norm_residual_q8) gives the norm's
// bits and, for the integer GEMV, the bits quantize_q8_rows gives for that output: widths whose
// packs leave the last turn of a block part full (33 x 32 over 64 threads, 4096 over 256), with
// and without the residual add, 1 and 5 tokens.
template <typename T>
void check_norm_q8(int hidden, int tokens, bool residual) {
  SCOPED_TRACE("hidden " + std::to_string(hidden) + ", tokens " + std::to_string(tokens) +
               (residual ? ", residual" : ""));
  const size_t n = static_cast<size_t>(tokens) * hidden;
  const auto x = random_storage<T>(n, 21 + static_cast<uint32_t>(hidden), -3.0f, 3.0f);
  const auto r = random_storage<T>(n, 22 + static_cast<uint32_t>(tokens), -3.0f, 3.0f);
  const std::vector<float> weight = random_values(static_cast<size_t>(hidden), 23, 0.5f, 1.5f);
  DeviceBuffer<float> d_weight(weight);
  DeviceBuffer<Storage<T>> d_x(x), d_r(r), d_sum(n), d_out(n), d_x2(x), d_r2(r), d_sum2(n),
      d_out2(n);
  DeviceBuffer<uint8_t> d_q8(std::vector<uint8_t>(kernels::q8_rows_bytes(tokens, hidden), 0xAB));
  DeviceBuffer<uint8_t> d_q8_ref(std::vector<uint8_t>(kernels::q8_rows_bytes(tokens, hidden)));
  const kernels::Q8Rows q8 = kernels::q8_rows_in(d_q8.get(), tokens, hidden);
  const kernels::Q8Rows q8_ref = kernels::q8_rows_in(d_q8_ref.get(), tokens, hidden);
  expect_ok(
      kernels::rms_norm_residual_q8<T>(device_ptr<T>(d_x), residual ? device_ptr<T>(d_r) : nullptr,
                                       residual ? device_ptr<T>(d_sum) : nullptr, d_weight.get(),
                                       1e-5f, device_ptr<T>(d_out), q8, tokens, hidden, nullptr));
  expect_ok(
      kernels::rms_norm_residual<T>(device_ptr<T>(d_x2), residual ? device_ptr<T>(d_r2) : nullptr,
                                    residual ? device_ptr<T>(d_sum2) : nullptr, d_weight.get(),
                                    1e-5f, device_ptr<T>(d_out2), tokens, hidden, nullptr));
  expect_ok(kernels::quantize_q8_rows<T>(device_ptr<T>(d_out2), hidden, q8_ref, nullptr));
  const auto out = d_out.download(), out_ref = d_out2.download();
  EXPECT_EQ(std::memcmp(out.data(), out_ref.data(), n * sizeof(Storage<T>)), 0) << "the norm";
  if (residual) {
    const auto sum = d_sum.download(), sum_ref = d_sum2.download();
    EXPECT_EQ(std::memcmp(sum.data(), sum_ref.data(), n * sizeof(Storage<T>)), 0) << "the sum";
  }
  const auto q = d_q8.download(), q_ref = d_q8_ref.download();
  ASSERT_EQ(q.size(), q_ref.size());
  EXPECT_EQ(std::memcmp(q.data(), q_ref.data(), q.size()), 0) << "the quantized rows";
}

TEST(QuantGemvInt8, NormWithItsOutputQuantizedGivesBothBits) {
  SLUICE_REQUIRE_CUDA();
  for (const int hidden : {33 * 32, 4096}) {
    for (const int tokens : {1, 5}) {
      for (const bool residual : {true, false}) {
        check_norm_q8<__nv_bfloat16>(hidden, tokens, residual);
        check_norm_q8<__half>(hidden, tokens, residual);
      }
    }
  }
  // A width that is not whole blocks is refused.
  DeviceBuffer<uint8_t> d_q8(std::vector<uint8_t>(kernels::q8_rows_bytes(1, 64)));
  EXPECT_NE(kernels::rms_norm_residual_q8<__nv_bfloat16>(
                nullptr, nullptr, nullptr, nullptr, 1e-5f, nullptr,
                kernels::Q8Rows{nullptr, nullptr, 1, 48}, 1, 48, nullptr),
            kernels::kKernelOk);
}

// A gated activation with its output quantized in the same launch (gated_mul_rows_q8) gives the
// activation's bits and, for the down product's integer GEMV, the bits quantize_q8_rows gives for
// them: every activation, in place over the gate half of gate|up rows as the forward pass runs
// it, widths of 33 blocks and 4096, 1 and 5 rows.
template <typename T>
void check_gated_q8(GatedActivation activation, int cols, int rows) {
  SCOPED_TRACE("activation " + std::to_string(static_cast<int>(activation)) + ", cols " +
               std::to_string(cols) + ", rows " + std::to_string(rows));
  const size_t n = static_cast<size_t>(rows) * 2 * cols;
  const auto gate_up = random_storage<T>(n, 31 + static_cast<uint32_t>(cols), -4.0f, 4.0f);
  DeviceBuffer<Storage<T>> d_fused(gate_up), d_plain(gate_up);
  DeviceBuffer<uint8_t> d_q8(std::vector<uint8_t>(kernels::q8_rows_bytes(rows, cols), 0xAB));
  DeviceBuffer<uint8_t> d_q8_ref(std::vector<uint8_t>(kernels::q8_rows_bytes(rows, cols)));
  const kernels::Q8Rows q8 = kernels::q8_rows_in(d_q8.get(), rows, cols);
  const kernels::Q8Rows q8_ref = kernels::q8_rows_in(d_q8_ref.get(), rows, cols);
  T* fused = device_ptr<T>(d_fused);
  T* plain = device_ptr<T>(d_plain);
  expect_ok(kernels::gated_mul_rows_q8<T>(activation, fused, fused + cols, fused, rows, cols,
                                          2 * cols, q8, nullptr));
  const auto gated_mul = activation == GatedActivation::GeluTanh ? &kernels::gelu_tanh_mul_rows<T>
                         : activation == GatedActivation::SwigluOai
                             ? &kernels::swiglu_oai_mul_rows<T>
                             : &kernels::silu_mul_rows<T>;
  expect_ok(gated_mul(plain, plain + cols, plain, rows, cols, 2 * cols, nullptr));
  expect_ok(kernels::quantize_q8_rows<T>(plain, 2 * cols, q8_ref, nullptr));
  const auto out = d_fused.download(), out_ref = d_plain.download();
  EXPECT_EQ(std::memcmp(out.data(), out_ref.data(), n * sizeof(Storage<T>)), 0) << "the rows";
  const auto q = d_q8.download(), q_ref = d_q8_ref.download();
  ASSERT_EQ(q.size(), q_ref.size());
  EXPECT_EQ(std::memcmp(q.data(), q_ref.data(), q.size()), 0) << "the quantized rows";
}

TEST(QuantGemvInt8, GatedActivationWithItsOutputQuantizedGivesBothBits) {
  SLUICE_REQUIRE_CUDA();
  for (const GatedActivation activation :
       {GatedActivation::Silu, GatedActivation::GeluTanh, GatedActivation::SwigluOai}) {
    for (const int cols : {33 * 32, 4096}) {
      for (const int rows : {1, 5}) {
        check_gated_q8<__nv_bfloat16>(activation, cols, rows);
        check_gated_q8<__half>(activation, cols, rows);
      }
    }
  }
  // A width that is not whole blocks, and a q8 of another shape, are refused.
  EXPECT_NE(kernels::gated_mul_rows_q8<__nv_bfloat16>(
                GatedActivation::Silu, nullptr, nullptr, nullptr, 1, 48, 96,
                kernels::Q8Rows{nullptr, nullptr, 1, 48}, nullptr),
            kernels::kKernelOk);
  EXPECT_NE(kernels::gated_mul_rows_q8<__nv_bfloat16>(
                GatedActivation::Silu, nullptr, nullptr, nullptr, 2, 64, 128,
                kernels::Q8Rows{nullptr, nullptr, 1, 64}, nullptr),
            kernels::kKernelOk);
}

// Strided activations, outputs into a column range of wider rows (one run of a q|k|v stack), and
// fp32 outputs (the LM head).
TYPED_TEST(QuantGemvInt8, StridesAndFp32Outputs) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  const int cols = 256;
  const Weight a = make_weight(DType::Q4_K, 9, cols, 3);
  const Weight b = make_weight(DType::Q6_K, 7, cols, 4);
  check_gemv<T, T>(a, 9, cols, 3, 2 * cols + 8, 9 + 7, 11);
  check_gemv<T, float>(b, 7, cols, 2, cols + 32, 11, 12);
}

// The grouped launch of a mixture-of-experts layer: each group's rows through its own expert's
// matrix give the bits of a separate quant_gemv_int8 per expert, with groups of more rows than a
// pass takes (11: two passes), an expert no row chose, and the groups out of expert order.
TEST(QuantGemvInt8Experts, GroupsGiveThePerExpertProducts) {
  SLUICE_REQUIRE_CUDA();
  const int rows = 21, cols = 512, num_experts = 3;
  std::vector<Weight> experts;
  for (int e = 0; e < num_experts; ++e)
    experts.push_back(make_weight(DType::Q4_K, rows, cols, 40 + static_cast<uint32_t>(e)));
  const std::vector<kernels::ExpertRows> groups = {{2, 0, 11}, {0, 11, 3}};
  const int num_rows = 14;
  const auto x =
      random_storage<__nv_bfloat16>(static_cast<size_t>(num_rows) * cols, 9, -1.0f, 1.0f);
  DeviceBuffer<Storage<__nv_bfloat16>> d_x(x);
  DeviceBuffer<uint8_t> d_q8(std::vector<uint8_t>(kernels::q8_rows_bytes(num_rows, cols)));
  const kernels::Q8Rows q8 = kernels::q8_rows_in(d_q8.get(), num_rows, cols);
  expect_ok(
      kernels::quantize_q8_rows<__nv_bfloat16>(device_ptr<__nv_bfloat16>(d_x), cols, q8, nullptr));
  std::vector<std::unique_ptr<DeviceBuffer<uint8_t>>> d_w;
  std::vector<uint64_t> pointers;
  for (const Weight& w : experts) {
    d_w.push_back(std::make_unique<DeviceBuffer<uint8_t>>(w.bytes));
    pointers.push_back(reinterpret_cast<uint64_t>(d_w.back()->get()));
  }
  DeviceBuffer<uint64_t> d_pointers(pointers);
  std::vector<uint8_t> group_bytes(groups.size() * sizeof(kernels::ExpertRows));
  std::memcpy(group_bytes.data(), groups.data(), group_bytes.size());
  DeviceBuffer<uint8_t> d_groups(group_bytes);
  DeviceBuffer<float> d_grouped(std::vector<float>(static_cast<size_t>(num_rows) * rows, 0.0f));
  expect_ok(kernels::quant_gemv_int8_experts<float>(
      kernels::QuantFormat::Q4_K, reinterpret_cast<const uint8_t* const*>(d_pointers.get()),
      experts[0].row_bytes, rows, q8, reinterpret_cast<const kernels::ExpertRows*>(d_groups.get()),
      static_cast<int>(groups.size()), d_grouped.get(), rows, nullptr));
  const std::vector<float> grouped = d_grouped.download();
  for (const kernels::ExpertRows& g : groups) {
    SCOPED_TRACE("expert " + std::to_string(g.expert));
    // The group's rows alone: its quantized rows are a slice of the grouped ones.
    const kernels::Q8Rows slice{q8.qs + static_cast<size_t>(g.first_row) * cols,
                                q8.scales + static_cast<size_t>(g.first_row) * (cols / 32),
                                g.num_rows, cols};
    DeviceBuffer<float> d_alone(std::vector<float>(static_cast<size_t>(g.num_rows) * rows, 0.0f));
    expect_ok(kernels::quant_gemv_int8<float>(
        kernels::QuantFormat::Q4_K, d_w[static_cast<size_t>(g.expert)]->get(), experts[0].row_bytes,
        rows, slice, d_alone.get(), rows, nullptr));
    const std::vector<float> alone = d_alone.download();
    EXPECT_EQ(std::memcmp(alone.data(), grouped.data() + static_cast<size_t>(g.first_row) * rows,
                          alone.size() * sizeof(float)),
              0);
  }
}

TEST(QuantGemvInt8Arguments, RefusesWhatItHasNoKernelFor) {
  const auto q4k = kernels::QuantFormat::Q4_K;
  const auto call = [](kernels::QuantFormat format, size_t row_bytes, int rows, int cols,
                       int tokens, int y_stride) {
    const kernels::Q8Rows x{nullptr, nullptr, tokens, cols};
    return kernels::quant_gemv_int8<float>(format, nullptr, row_bytes, rows, x, nullptr, y_stride,
                                           nullptr);
  };
  EXPECT_FALSE(kernels::has_int8_gemv(kernels::QuantFormat::Q2_K));
  EXPECT_FALSE(kernels::has_int8_gemv(kernels::QuantFormat::Q3_K));
  EXPECT_FALSE(kernels::has_int8_gemv(kernels::QuantFormat::Dense));
  EXPECT_NE(call(kernels::QuantFormat::Q2_K, 84, 1, 256, 1, 0), kernels::kKernelOk) << "Q2_K";
  EXPECT_NE(call(q4k, 144, 1, 224, 1, 0), kernels::kKernelOk) << "cols not whole super-blocks";
  EXPECT_NE(call(q4k, 143, 1, 256, 1, 0), kernels::kKernelOk) << "row bytes not its blocks";
  EXPECT_NE(call(q4k, 144, 1, 256, kernels::kQuantInt8GemvMaxTokens + 1, 0), kernels::kKernelOk)
      << "more tokens than it takes";
  EXPECT_NE(call(q4k, 144, 4, 256, 1, 3), kernels::kKernelOk) << "y stride below rows";
  EXPECT_EQ(call(q4k, 144, 4, 256, 0, 0), kernels::kKernelOk) << "no tokens: nothing to do";
  const kernels::Q8Rows odd{nullptr, nullptr, 1, 48};
  EXPECT_NE(kernels::quantize_q8_rows<float>(nullptr, 48, odd, nullptr), kernels::kKernelOk)
      << "a row that is not whole 32-value blocks";
}

}  // namespace
}  // namespace sluice
