// The Gated DeltaNet kernels (kernels/gated_delta_net.cuh) and the sigmoid gates
// (kernels/sigmoid_gates.cuh) against plain host references written from the layer's definition
// (engine/model/model_config.h's DeltaNetConfig), in double, on odd sizes: 2 key heads of 40 and
// 4 value heads of 37 (a column tile and a ragged one), tiled and grouped value heads, three
// requests of 1, 5 and 9 tokens, some starting at position 0 and some continuing from a state.
// A sequence split over steps gives the bits of the sequence in one step (the recurrent form walks
// the tokens in order either way). Runs in the emulator.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/gated_delta_net.cuh"
#include "kernels/sigmoid_gates.cuh"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/kernel_test_support.h"

namespace sluice {
namespace {

using namespace kernel_test;  // NOLINT: the shared helpers of the kernel tests

constexpr int kNk = 2, kNv = 4, kDk = 40, kDv = 37, kKernel = 4;
constexpr int kKeyDim = kNk * kDk;
constexpr int kValueDim = kNv * kDv;
constexpr int kConvDim = 2 * kKeyDim + kValueDim;
// A row of the stacked input product: q|k|v, z, b, alpha (and 3 unused columns).
constexpr int kZ = kConvDim, kB = kZ + kValueDim, kAlpha = kB + kNv, kStride = kAlpha + kNv + 3;
constexpr int64_t kConvState = int64_t{kKernel - 1} * kConvDim;
constexpr int64_t kLayerState = kConvState + int64_t{kNv} * kDk * kDv;
constexpr float kEps = 1e-6f;

double silu(double x) {
  return x / (1.0 + std::exp(-x));
}
double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// One request's state in double: conv history [K-1][conv_dim], S [nv][dk][dv].
struct HostState {
  std::vector<double> conv = std::vector<double>(kConvState, 0.0);
  std::vector<double> s = std::vector<double>(static_cast<size_t>(kNv) * kDk * kDv, 0.0);
};

// The layer from the stacked rows to o (before the gated norm), token by token; updates state.
void reference_tokens(const std::vector<float>& rows, int begin, int count,
                      const std::vector<float>& taps, const std::vector<float>& a,
                      const std::vector<float>& dt, bool grouped, HostState& st,
                      std::vector<double>& o) {
  for (int t = begin; t < begin + count; ++t) {
    const float* row = rows.data() + static_cast<size_t>(t) * kStride;
    std::vector<double> x(kConvDim);
    for (int c = 0; c < kConvDim; ++c) {
      double acc = 0.0;
      for (int j = 0; j < kKernel - 1; ++j)
        acc += taps[static_cast<size_t>(c) * kKernel + j] *
               st.conv[static_cast<size_t>(j) * kConvDim + c];
      acc += taps[static_cast<size_t>(c) * kKernel + kKernel - 1] * row[c];
      x[static_cast<size_t>(c)] = silu(acc);
    }
    for (int j = 0; j + 1 < kKernel - 1; ++j) {
      for (int c = 0; c < kConvDim; ++c)
        st.conv[static_cast<size_t>(j) * kConvDim + c] =
            st.conv[static_cast<size_t>(j + 1) * kConvDim + c];
    }
    for (int c = 0; c < kConvDim; ++c)
      st.conv[static_cast<size_t>(kKernel - 2) * kConvDim + c] = row[c];
    for (int h = 0; h < kNv; ++h) {
      const int kh = grouped ? h / (kNv / kNk) : h % kNk;
      std::vector<double> q(kDk), k(kDk);
      double qq = 0.0, kk = 0.0;
      for (int i = 0; i < kDk; ++i) {
        q[static_cast<size_t>(i)] = x[static_cast<size_t>(kh * kDk + i)];
        k[static_cast<size_t>(i)] = x[static_cast<size_t>(kKeyDim + kh * kDk + i)];
        qq += q[static_cast<size_t>(i)] * q[static_cast<size_t>(i)];
        kk += k[static_cast<size_t>(i)] * k[static_cast<size_t>(i)];
      }
      for (int i = 0; i < kDk; ++i) {
        q[static_cast<size_t>(i)] /= std::max(std::sqrt(qq), double{kEps}) * std::sqrt(double{kDk});
        k[static_cast<size_t>(i)] /= std::max(std::sqrt(kk), double{kEps});
      }
      const double beta = sigmoid(row[kB + h]);
      const double sp = std::log1p(std::exp(double{row[kAlpha + h]} + dt[static_cast<size_t>(h)]));
      const double decay = std::exp(a[static_cast<size_t>(h)] * sp);
      double* S = st.s.data() + static_cast<size_t>(h) * kDk * kDv;
      for (int j = 0; j < kDv; ++j) {
        double kv = 0.0;
        for (int i = 0; i < kDk; ++i) {
          S[i * kDv + j] *= decay;
          kv += S[i * kDv + j] * k[static_cast<size_t>(i)];
        }
        const double delta = beta * (x[static_cast<size_t>(2 * kKeyDim + h * kDv + j)] - kv);
        double out = 0.0;
        for (int i = 0; i < kDk; ++i) {
          S[i * kDv + j] += k[static_cast<size_t>(i)] * delta;
          out += S[i * kDv + j] * q[static_cast<size_t>(i)];
        }
        o[static_cast<size_t>(t) * kValueDim + h * kDv + j] = out;
      }
    }
  }
}

struct Inputs {
  std::vector<float> rows, taps, a, dt;
};

Inputs random_inputs(int num_tokens) {
  Inputs in;
  in.rows = random_values(static_cast<size_t>(num_tokens) * kStride, 11, -1.5f, 1.5f);
  in.taps = random_values(static_cast<size_t>(kConvDim) * kKernel, 12, -0.8f, 0.8f);
  in.a = random_values(kNv, 13, -2.0f, -0.2f);
  in.dt = random_values(kNv, 14, -1.5f, 0.5f);
  return in;
}

// Runs conv + delta rule on the device for requests (token counts, seq_lens, slots); returns o.
std::vector<float> run_device(const Inputs& in, const std::vector<int32_t>& counts,
                              const std::vector<int32_t>& seq_lens,
                              const std::vector<int32_t>& slots, bool grouped,
                              test::DeviceBuffer<float>& states) {
  std::vector<int32_t> starts{0};
  for (const int32_t c : counts) starts.push_back(starts.back() + c);
  const int num_tokens = starts.back();
  test::DeviceBuffer<float> rows(in.rows), taps(in.taps), a(in.a), dt(in.dt);
  test::DeviceBuffer<float> out(static_cast<size_t>(num_tokens) * kValueDim);
  test::DeviceBuffer<int32_t> d_starts(starts), d_lens(seq_lens), d_slots(slots);
  kernels::DeltaNetRequests rq{d_starts.get(), d_lens.get(),
                               d_slots.get(),  static_cast<int>(counts.size()),
                               states.get(),   kLayerState + 5};
  expect_ok(
      kernels::deltanet_conv(rows.get(), kStride, taps.get(), kConvDim, kKernel, rq, 0, nullptr));
  const kernels::DeltaRuleShape shape{kNk, kNv, kDk, kDv, grouped, kEps};
  expect_ok(kernels::gated_delta_rule(rows.get(), kStride, rows.get() + kB, rows.get() + kAlpha,
                                      kStride, a.get(), dt.get(), out.get(), shape, rq, kConvState,
                                      nullptr));
  return out.download();
}

TEST(GatedDeltaNetKernel, ConvAndDeltaRuleMatchTheHostReferenceFromZeroAndFromAState) {
  SLUICE_REQUIRE_CUDA();
  for (const bool grouped : {false, true}) {
    SCOPED_TRACE(grouped ? "grouped" : "tiled");
    // Step 1: three requests from position 0 (1, 5 and 9 tokens) in slots 2, 0, 1.
    // Step 2: the same requests continue (4, 1, 2 tokens) from their states.
    const std::vector<int32_t> counts1{1, 5, 9}, counts2{4, 1, 2};
    const Inputs in1 = random_inputs(15);
    Inputs in2 = in1;  // the layer's weights, the next step's rows
    in2.rows = random_values(7 * static_cast<size_t>(kStride), 21, -1.5f, 1.5f);
    test::DeviceBuffer<float> states(3 * static_cast<size_t>(kLayerState + 5));
    // NaN-fill the pool: a request from position 0 must not read it.
    SLUICE_CUDA_OK(cudaMemset(states.get(), 0xff, states.size() * sizeof(float)));
    const std::vector<float> o1 = run_device(in1, counts1, counts1, {2, 0, 1}, grouped, states);
    const std::vector<float> o2 = run_device(in2, counts2, {5, 6, 11}, {2, 0, 1}, grouped, states);

    std::vector<double> ref1(o1.size()), ref2(o2.size());
    int begin1 = 0, begin2 = 0;
    for (size_t r = 0; r < 3; ++r) {
      HostState st;
      reference_tokens(in1.rows, begin1, counts1[r], in1.taps, in1.a, in1.dt, grouped, st, ref1);
      reference_tokens(in2.rows, begin2, counts2[r], in1.taps, in1.a, in1.dt, grouped, st, ref2);
      begin1 += counts1[r];
      begin2 += counts2[r];
    }
    expect_close(o1, std::vector<float>(ref1.begin(), ref1.end()), 1e-4, "step 1");
    expect_close(o2, std::vector<float>(ref2.begin(), ref2.end()), 1e-4, "step 2");
  }
}

// A sequence split over steps (its state carried in the slot) gives the bits of the sequence in one
// step, as does a request whose neighbours in the step change; a padded row (slot -1) keeps
// nothing.
TEST(GatedDeltaNetKernel, SplittingASequenceOverStepsGivesTheSameBits) {
  SLUICE_REQUIRE_CUDA();
  const Inputs in = random_inputs(9);
  test::DeviceBuffer<float> states(2 * static_cast<size_t>(kLayerState + 5));
  const std::vector<float> whole = run_device(in, {9}, {9}, {1}, false, states);
  const std::vector<float> slot_after_whole = states.download();
  // Tokens 0-2, then 3-8 beside a padded row with no slot.
  Inputs first = in, second = in;
  first.rows.resize(3 * static_cast<size_t>(kStride));
  second.rows.assign(in.rows.begin() + 3 * kStride, in.rows.end());
  second.rows.insert(second.rows.end(), in.rows.begin(), in.rows.begin() + kStride);
  const std::vector<float> a = run_device(first, {3}, {3}, {0}, false, states);
  const std::vector<float> b = run_device(second, {6, 1}, {9, 1}, {0, -1}, false, states);
  std::vector<float> split(a);
  split.insert(split.end(), b.begin(), b.begin() + 6 * kValueDim);
  expect_same_bits(split, whole, "o");
  const std::vector<float> after = states.download();
  const size_t slot = static_cast<size_t>(kLayerState + 5);
  expect_same_bits(std::vector<float>(after.begin(), after.begin() + kLayerState),
                   std::vector<float>(slot_after_whole.begin() + slot,
                                      slot_after_whole.begin() + slot + kLayerState),
                   "the state after the sequence");
}

template <typename T>
class GatedNormKernel : public ::testing::Test {};
TYPED_TEST_SUITE(GatedNormKernel, ElementTypes, ElementTypeNames);

TYPED_TEST(GatedNormKernel, RmsNormTimesWeightTimesSiluOfZPerHead) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  for (const int head_dim : {37, 64, 130}) {
    const int heads = 3, tokens = 5, z_stride = heads * head_dim + 7;
    const auto o = random_values(static_cast<size_t>(tokens) * heads * head_dim, 31, -2.0f, 2.0f);
    const auto z = random_values(static_cast<size_t>(tokens) * z_stride, 32, -3.0f, 3.0f);
    const auto w = random_values(static_cast<size_t>(head_dim), 33, 0.5f, 1.5f);
    std::vector<float> expected(o.size());
    for (int t = 0; t < tokens; ++t) {
      for (int h = 0; h < heads; ++h) {
        const size_t base = (static_cast<size_t>(t) * heads + h) * head_dim;
        double squares = 0.0;
        for (int i = 0; i < head_dim; ++i) squares += double{o[base + i]} * o[base + i];
        const double scale = 1.0 / std::sqrt(squares / head_dim + kEps);
        for (int i = 0; i < head_dim; ++i) {
          const double gate = z[static_cast<size_t>(t) * z_stride + h * head_dim + i];
          expected[base + i] =
              static_cast<float>(o[base + i] * scale * w[static_cast<size_t>(i)] * silu(gate));
        }
      }
    }
    test::DeviceBuffer<float> d_o(o), d_z(z), d_w(w);
    test::DeviceBuffer<Storage<T>> d_out(o.size());
    expect_ok(kernels::gated_rms_norm<T>(d_o.get(), d_z.get(), z_stride, d_w.get(), kEps,
                                         device_ptr<T>(d_out), tokens, heads, head_dim, nullptr));
    expect_close(to_floats<T>(d_out.download()), expected, ElementTraits<T>::kTolerance,
                 "head_dim " + std::to_string(head_dim));
  }
}

template <typename T>
class SigmoidGatesKernel : public ::testing::Test {};
TYPED_TEST_SUITE(SigmoidGatesKernel, ElementTypes, ElementTypeNames);

// The doubled q projection's rows (per head q | gate, then k | v) split into q | k | v and the
// gate (exact copies), Attn * sigmoid(gate), and the shared expert's sigmoid-scaled add.
TYPED_TEST(SigmoidGatesKernel, SplitGateMulAndScaledAdd) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  const int tokens = 3, heads = 3, head_dim = 20, tail = 17;
  const int q = heads * head_dim, width = 2 * q + tail;
  const auto in = random_storage<T>(static_cast<size_t>(tokens) * width, 41);
  std::vector<Storage<T>> want_qkv, want_gate;
  for (int t = 0; t < tokens; ++t) {
    const auto* row = in.data() + static_cast<size_t>(t) * width;
    for (int h = 0; h < heads; ++h) {
      want_qkv.insert(want_qkv.end(), row + 2 * h * head_dim, row + (2 * h + 1) * head_dim);
      want_gate.insert(want_gate.end(), row + (2 * h + 1) * head_dim, row + (2 * h + 2) * head_dim);
    }
    want_qkv.insert(want_qkv.end(), row + 2 * q, row + width);
  }
  test::DeviceBuffer<Storage<T>> d_in(in), d_qkv(want_qkv.size()), d_gate(want_gate.size());
  expect_ok(kernels::split_gated_q<T>(device_ptr<T>(d_in), device_ptr<T>(d_qkv),
                                      device_ptr<T>(d_gate), tokens, heads, head_dim, tail,
                                      nullptr));
  expect_same_bits(d_qkv.download(), want_qkv, "q|k|v");
  expect_same_bits(d_gate.download(), want_gate, "gate");

  const auto x = random_storage<T>(want_gate.size(), 42);
  std::vector<float> gated(x.size());
  const auto x_f = to_floats<T>(x), gate_f = to_floats<T>(want_gate);
  for (size_t i = 0; i < x.size(); ++i) gated[i] = static_cast<float>(x_f[i] * sigmoid(gate_f[i]));
  test::DeviceBuffer<Storage<T>> d_x(x);
  expect_ok(kernels::sigmoid_gate_mul<T>(device_ptr<T>(d_x), device_ptr<T>(d_gate),
                                         static_cast<int64_t>(x.size()), nullptr));
  expect_close(to_floats<T>(d_x.download()), gated, ElementTraits<T>::kTolerance, "gated");

  const int cols = 33;
  const auto out = random_storage<T>(static_cast<size_t>(tokens) * cols, 43);
  const auto logit = random_values(tokens, 44, -3.0f, 3.0f);
  const auto shared = random_values(static_cast<size_t>(tokens) * cols, 45, -2.0f, 2.0f);
  std::vector<float> sum = to_floats<T>(out);
  for (size_t i = 0; i < sum.size(); ++i)
    sum[i] = static_cast<float>(sum[i] + sigmoid(logit[i / cols]) * shared[i]);
  test::DeviceBuffer<Storage<T>> d_out(out);
  test::DeviceBuffer<float> d_logit(logit), d_shared(shared);
  expect_ok(kernels::add_sigmoid_scaled_rows<T>(device_ptr<T>(d_out), d_logit.get(), d_shared.get(),
                                                tokens, cols, nullptr));
  expect_close(to_floats<T>(d_out.download()), sum, ElementTraits<T>::kTolerance, "shared add");
}

}  // namespace
}  // namespace sluice
