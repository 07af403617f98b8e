// The kernels behind the options of the model definition that go beyond Llama (Qwen3, Gemma 2/3):
// scaled embeddings, q/k head norms, a plain in-place RMSNorm (the post norms), GeGLU and the
// final logit soft-cap, against the CPU backend's reference code (engine/backend/cpu/cpu_ops.h and
// CpuBackend::Ops), for float, bf16 and fp16, on odd sizes. Tolerances as in kernel_ops_test.cpp
// (|gpu - ref| <= tol * (1 + |ref|)): 1e-4 for float, 2e-2 for bf16 and fp16; the scaled
// embedding is compared bit for bit (one float product rounded once, as the CPU backend's fp32
// row times the scale rounds when stored in T).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend/cpu/cpu_ops.h"
#include "kernels/elementwise.cuh"
#include "kernels/embedding.cuh"
#include "kernels/head_norm.cuh"
#include "kernels/rms_norm.cuh"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/kernel_test_support.h"

namespace sluice {
namespace {

using namespace kernel_test;  // NOLINT: the shared helpers of the kernel tests

template <typename T>
class ArchOpsKernel : public ::testing::Test {};

TYPED_TEST_SUITE(ArchOpsKernel, ElementTypes, ElementTypeNames);

constexpr int kTokenCounts[] = {1, 7, 33};

// Gemma: the embedding row times sqrt(hidden), as CpuBackend::Ops::embed multiplies the fp32 row
// (the T value widened) by the float scale; stored in T the product is rounded once.
TYPED_TEST(ArchOpsKernel, EmbeddingGatherScalesRowsLikeTheCpu) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  const int vocab_size = 64;
  for (const int hidden_size : {64, 1001, 3584}) {
    for (const int num_tokens : kTokenCounts) {
      SCOPED_TRACE("hidden " + std::to_string(hidden_size) + ", tokens " +
                   std::to_string(num_tokens));
      const float scale = std::sqrt(static_cast<float>(hidden_size));
      const auto table = random_storage<T>(static_cast<size_t>(vocab_size) * hidden_size,
                                           static_cast<uint32_t>(hidden_size + num_tokens));
      std::mt19937 rng(5);
      std::vector<int32_t> ids(static_cast<size_t>(num_tokens));
      for (int32_t& id : ids) id = static_cast<int32_t>(rng() % vocab_size);
      if (num_tokens >= 7) ids[3] = vocab_size;  // out of range: a zero row
      std::vector<float> expected(static_cast<size_t>(num_tokens) * hidden_size, 0.0f);
      const std::vector<float> table_f = to_floats<T>(table);
      for (int t = 0; t < num_tokens; ++t) {
        const int32_t id = ids[static_cast<size_t>(t)];
        if (id >= vocab_size) continue;
        for (int i = 0; i < hidden_size; ++i) {
          expected[static_cast<size_t>(t) * hidden_size + i] =
              table_f[static_cast<size_t>(id) * hidden_size + i] * scale;
        }
      }
      DeviceBuffer<Storage<T>> d_table(table);
      DeviceBuffer<int32_t> d_ids(ids);
      DeviceBuffer<Storage<T>> d_out(expected.size());
      expect_ok(kernels::embedding_gather<T>(device_ptr<T>(d_table), d_ids.get(),
                                             device_ptr<T>(d_out), num_tokens, hidden_size,
                                             vocab_size, scale, nullptr));
      expect_same_bits(d_out.download(), to_storage<T>(expected), "scaled embedding");
    }
  }
}

// Gemma's post-attention and post-FFN norms: RMSNorm of a projection with no residual add, in
// place or into another buffer, against the CPU rms_norm.
TYPED_TEST(ArchOpsKernel, RmsNormWithoutResidualNormsInPlace) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  const float eps = 1e-6f;
  for (const int hidden_size : {64, 1000, 1001, 3584}) {
    for (const int num_tokens : kTokenCounts) {
      SCOPED_TRACE("hidden " + std::to_string(hidden_size) + ", tokens " +
                   std::to_string(num_tokens));
      const size_t n = static_cast<size_t>(num_tokens) * hidden_size;
      const auto x = random_storage<T>(n, 51 + static_cast<uint32_t>(hidden_size));
      const auto weight = random_values(static_cast<size_t>(hidden_size), 52, 0.5f, 1.5f);
      const std::vector<float> x_f = to_floats<T>(x);
      std::vector<float> expected(n);
      rms_norm(x_f.data(), weight.data(), eps, num_tokens, hidden_size, expected.data());

      DeviceBuffer<Storage<T>> d_x(x), d_out(n);
      DeviceBuffer<float> d_weight(weight);
      expect_ok(kernels::rms_norm_residual<T>(device_ptr<T>(d_x), nullptr, nullptr, d_weight.get(),
                                              eps, device_ptr<T>(d_out), num_tokens, hidden_size,
                                              nullptr));
      expect_close(to_floats<T>(d_out.download()), expected, ElementTraits<T>::kTolerance, "out");
      expect_same_bits(d_x.download(), x, "x (read only)");

      expect_ok(kernels::rms_norm_residual<T>(device_ptr<T>(d_x), nullptr, nullptr, d_weight.get(),
                                              eps, device_ptr<T>(d_x), num_tokens, hidden_size,
                                              nullptr));
      expect_close(to_floats<T>(d_x.download()), expected, ElementTraits<T>::kTolerance,
                   "in place");
    }
  }
  // A residual to add needs somewhere to store the sum.
  DeviceBuffer<Storage<T>> d_small(64);
  DeviceBuffer<float> d_weight(std::vector<float>(64, 1.0f));
  EXPECT_NE(
      kernels::rms_norm_residual<T>(device_ptr<T>(d_small), device_ptr<T>(d_small), nullptr,
                                    d_weight.get(), eps, device_ptr<T>(d_small), 1, 64, nullptr),
      kernels::kKernelOk);
}

// Qwen3 and Gemma 3: RMSNorm of every head of q and of k (CpuBackend::Ops::head_norms: rms_norm
// over rows of head_dim), in the fused q|k|v rows of the CUDA backend (v untouched) and in dense
// arrays.
template <typename T>
void check_head_norms(int head_dim, int num_heads, int num_kv_heads, int num_tokens, bool fused) {
  SCOPED_TRACE("head_dim " + std::to_string(head_dim) + ", heads " + std::to_string(num_heads) +
               "/" + std::to_string(num_kv_heads) + ", tokens " + std::to_string(num_tokens) +
               (fused ? ", fused q|k|v rows" : ", dense"));
  const float eps = 1e-6f;
  const size_t q_dim = static_cast<size_t>(num_heads) * head_dim;
  const size_t kv_dim = static_cast<size_t>(num_kv_heads) * head_dim;
  const size_t row = q_dim + 2 * kv_dim;
  const auto tokens = static_cast<size_t>(num_tokens);
  const auto seed = static_cast<uint32_t>(head_dim * 7 + num_tokens);
  const auto qkv = random_storage<T>(tokens * row, seed);
  const auto q_weight = random_values(static_cast<size_t>(head_dim), seed + 1, 0.5f, 1.5f);
  const auto k_weight = random_values(static_cast<size_t>(head_dim), seed + 2, 0.5f, 1.5f);

  // The reference: q and k split out of the rows, each normed head by head.
  std::vector<float> q(tokens * q_dim), k(tokens * kv_dim);
  const std::vector<float> qkv_f = to_floats<T>(qkv);
  for (size_t t = 0; t < tokens; ++t) {
    std::copy_n(qkv_f.begin() + static_cast<ptrdiff_t>(t * row), q_dim,
                q.begin() + static_cast<ptrdiff_t>(t * q_dim));
    std::copy_n(qkv_f.begin() + static_cast<ptrdiff_t>(t * row + q_dim), kv_dim,
                k.begin() + static_cast<ptrdiff_t>(t * kv_dim));
  }
  std::vector<float> expected_q(q.size()), expected_k(k.size());
  rms_norm(q.data(), q_weight.data(), eps, num_tokens * num_heads, head_dim, expected_q.data());
  rms_norm(k.data(), k_weight.data(), eps, num_tokens * num_kv_heads, head_dim, expected_k.data());

  DeviceBuffer<float> d_q_weight(q_weight), d_k_weight(k_weight);
  std::vector<float> gpu_q, gpu_k;
  if (fused) {
    DeviceBuffer<Storage<T>> d_qkv(qkv);
    T* base = device_ptr<T>(d_qkv);
    expect_ok(kernels::head_rms_norm<T>(base, base + q_dim, d_q_weight.get(), d_k_weight.get(), eps,
                                        num_tokens, num_heads, num_kv_heads, head_dim,
                                        static_cast<int64_t>(row), nullptr));
    const auto out = d_qkv.download();
    const std::vector<float> out_f = to_floats<T>(out);
    for (size_t t = 0; t < tokens; ++t) {
      const auto begin = out_f.begin() + static_cast<ptrdiff_t>(t * row);
      gpu_q.insert(gpu_q.end(), begin, begin + static_cast<ptrdiff_t>(q_dim));
      gpu_k.insert(gpu_k.end(), begin + static_cast<ptrdiff_t>(q_dim),
                   begin + static_cast<ptrdiff_t>(q_dim + kv_dim));
      for (size_t i = t * row + q_dim + kv_dim; i < (t + 1) * row; ++i)
        ASSERT_EQ(std::memcmp(&out[i], &qkv[i], sizeof(out[i])), 0) << "v changed at " << i;
    }
  } else {
    DeviceBuffer<Storage<T>> d_q(to_storage<T>(q)), d_k(to_storage<T>(k));
    expect_ok(kernels::head_rms_norm<T>(device_ptr<T>(d_q), device_ptr<T>(d_k), d_q_weight.get(),
                                        d_k_weight.get(), eps, num_tokens, num_heads, num_kv_heads,
                                        head_dim, 0, nullptr));
    gpu_q = to_floats<T>(d_q.download());
    gpu_k = to_floats<T>(d_k.download());
  }
  expect_close(gpu_q, expected_q, ElementTraits<T>::kTolerance, "q");
  expect_close(gpu_k, expected_k, ElementTraits<T>::kTolerance, "k");
}

TYPED_TEST(ArchOpsKernel, HeadRmsNormMatchesCpuRmsNormPerHead) {
  SLUICE_REQUIRE_CUDA();
  // Qwen3 (128, GQA), Gemma 3 (256, 32 in the tiny model, MQA), and sizes that are not a
  // multiple of the warp.
  for (const auto& [head_dim, num_kv_heads] :
       {std::pair{128, 2}, std::pair{256, 1}, std::pair{32, 1}, std::pair{33, 2},
        std::pair{80, 4}}) {
    for (const int num_tokens : kTokenCounts) {
      for (const bool fused : {true, false}) {
        check_head_norms<TypeParam>(head_dim, 4, num_kv_heads, num_tokens, fused);
      }
    }
  }
  // A q|k|v row stride shorter than q + k + v is refused.
  using T = TypeParam;
  DeviceBuffer<Storage<T>> d_small(256);
  DeviceBuffer<float> d_weight(std::vector<float>(32, 1.0f));
  T* base = device_ptr<T>(d_small);
  EXPECT_NE(kernels::head_rms_norm<T>(base, base + 64, d_weight.get(), d_weight.get(), 1e-6f, 1, 2,
                                      1, 32, 64 + 32, nullptr),
            kernels::kKernelOk);
}

// A gated activation over the fused gate|up rows: act(gate) * up written over the gate half, the
// up half untouched; aligned (packed) and misaligned by one element (scalar), against the CPU's
// cpu_mul(gate, up, n) (the kernel: launch(base, rows, cols)).
template <typename T, typename CpuMul, typename Launch>
void check_gated_rows(CpuMul cpu_mul, Launch launch, const char* what) {
  for (const int64_t rows : {int64_t{1}, int64_t{7}, int64_t{33}}) {
    for (const int64_t cols : {int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{2051}}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + ", cols " + std::to_string(cols));
      for (const int64_t misalign : {int64_t{0}, int64_t{1}}) {
        const auto row = static_cast<size_t>(2 * cols);
        const auto n = static_cast<size_t>(rows) * row + static_cast<size_t>(misalign);
        const auto gate_up =
            random_storage<T>(n, static_cast<uint32_t>(61 + rows + cols), -8.0f, 8.0f);
        const std::vector<float> gate_up_f = to_floats<T>(gate_up);
        std::vector<float> gate, up;
        for (int64_t r = 0; r < rows; ++r) {
          const auto begin = gate_up_f.begin() + static_cast<ptrdiff_t>(misalign + r * 2 * cols);
          gate.insert(gate.end(), begin, begin + cols);
          up.insert(up.end(), begin + cols, begin + 2 * cols);
        }
        cpu_mul(gate.data(), up.data(), rows * cols);

        DeviceBuffer<Storage<T>> d_gate_up(gate_up);
        T* base = device_ptr<T>(d_gate_up) + misalign;
        expect_ok(launch(base, rows, cols));
        const auto out = d_gate_up.download();
        const std::vector<float> out_f = to_floats<T>(out);
        std::vector<float> gpu_gate;
        for (int64_t r = 0; r < rows; ++r) {
          const auto first = static_cast<size_t>(misalign + r * 2 * cols);
          gpu_gate.insert(gpu_gate.end(), out_f.begin() + static_cast<ptrdiff_t>(first),
                          out_f.begin() + static_cast<ptrdiff_t>(first) + cols);
          for (size_t i = first + static_cast<size_t>(cols); i < first + row; ++i)
            ASSERT_EQ(std::memcmp(&out[i], &gate_up[i], sizeof(out[i])), 0) << "up changed";
        }
        expect_close(gpu_gate, gate, ElementTraits<T>::kTolerance,
                     std::string(what) + (misalign ? ", misaligned" : ""));
      }
    }
  }
}

// GeGLU (Gemma).
TYPED_TEST(ArchOpsKernel, GeluTanhMulRowsMatchesCpuGeGlu) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  check_gated_rows<T>(
      gelu_tanh_mul,
      [](T* base, int64_t rows, int64_t cols) {
        return kernels::gelu_tanh_mul_rows<T>(base, base + cols, base, rows, cols, 2 * cols,
                                              nullptr);
      },
      "gelu(gate) * up");
}

// gpt-oss's clamped SwiGLU: the inputs span [-8, 8], past both clamps at 7.
TYPED_TEST(ArchOpsKernel, SwigluOaiMulRowsMatchesCpu) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  check_gated_rows<T>(
      swiglu_oai_mul,
      [](T* base, int64_t rows, int64_t cols) {
        return kernels::swiglu_oai_mul_rows<T>(base, base + cols, base, rows, cols, 2 * cols,
                                               nullptr);
      },
      "swiglu_oai(gate, up)");
}

// Gemma 2's final logit soft-cap, cap * tanh(x / cap), on logits well inside and far outside the
// cap.
TYPED_TEST(ArchOpsKernel, SoftCapMatchesCpu) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  const float cap = 30.0f;
  for (const int64_t n : {int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{512 * 7 + 3}}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const auto x = random_storage<T>(static_cast<size_t>(n), 71, -200.0f, 200.0f);
    std::vector<float> expected = to_floats<T>(x);
    soft_cap(expected.data(), n, cap);
    DeviceBuffer<Storage<T>> d_x(x);
    expect_ok(kernels::soft_cap<T>(device_ptr<T>(d_x), n, cap, nullptr));
    expect_close(to_floats<T>(d_x.download()), expected, ElementTraits<T>::kTolerance, "capped");
  }
  DeviceBuffer<Storage<T>> d_small(8);
  EXPECT_NE(kernels::soft_cap<T>(device_ptr<T>(d_small), 8, 0.0f, nullptr), kernels::kKernelOk);
}

}  // namespace
}  // namespace sluice
