// rope_and_cache (RoPE fused with the KV-cache write) against the CPU backend's apply_rope, for
// float, bf16 and fp16, on odd head sizes, in dense and fused q|k|v rows. Tolerances as in
// kernel_ops_test.cpp (|gpu - ref| <= tol * (1 + |ref|)): 1e-4 for float, 2e-2 for bf16 and fp16;
// the cache slots are compared bit for bit with what the kernel left in k and v.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend/cpu/cpu_ops.h"
#include "engine/core/thread_pool.h"
#include "kernels/rope_cache.cuh"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/kernel_test_support.h"

namespace sluice {
namespace {

using namespace kernel_test;  // NOLINT: the shared helpers of the kernel tests

template <typename T>
class RopeCacheKernel : public ::testing::Test {};

TYPED_TEST_SUITE(RopeCacheKernel, ElementTypes, ElementTypeNames);

constexpr int kRopeTokenCounts[] = {1, 7, 256};

// Everything one rope_and_cache case needs, with the CPU reference worked out.
// fused: q, k and v are the parts of one [num_tokens, q_dim + 2 * kv_dim] array, as the CUDA
// backend's single q|k|v product leaves them. rotary_dim: the dimensions of a head that rotate
// (0: all of them).
template <typename T>
void check_rope_and_cache(int head_dim, bool interleaved, int num_tokens, ThreadPool& pool,
                          bool fused = false, int rotary_dim = 0) {
  if (rotary_dim == 0) rotary_dim = head_dim;
  SCOPED_TRACE("head_dim " + std::to_string(head_dim) + ", rotary_dim " +
               std::to_string(rotary_dim) + (interleaved ? ", interleaved" : ", rotate-half") +
               ", tokens " + std::to_string(num_tokens) + (fused ? ", fused q|k|v rows" : ""));
  const int num_heads = 4;
  const int num_kv_heads = 2;
  const int block_size = 16;
  const int num_blocks = (num_tokens + block_size - 1) / block_size + 3;
  const int num_slots = num_blocks * block_size;
  const size_t q_size = static_cast<size_t>(num_tokens) * num_heads * head_dim;
  const size_t kv_dim = static_cast<size_t>(num_kv_heads) * head_dim;
  const size_t kv_size = static_cast<size_t>(num_tokens) * kv_dim;
  const auto seed = static_cast<uint32_t>(head_dim * 31 + num_tokens);

  std::mt19937 rng(seed);
  std::vector<int32_t> positions(static_cast<size_t>(num_tokens));
  for (int32_t& p : positions) p = static_cast<int32_t>(rng() % 131072);
  positions.front() = 131071;
  if (num_tokens > 1) positions.back() = 0;
  // Distinct slots in a shuffled order; every fifth token is padding (slot -1).
  std::vector<int64_t> slots(static_cast<size_t>(num_slots));
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  std::vector<int64_t> slot_mapping(slots.begin(), slots.begin() + num_tokens);
  for (size_t t = 2; t < slot_mapping.size(); t += 5) slot_mapping[t] = -1;

  // inv_freq in float for the kernel; the reference gets the very same values in double (one
  // per rotated pair: fewer than head_dim / 2 make apply_rope's rotary partial).
  const double theta = head_dim == 128 ? 500000.0 : 10000.0;
  std::vector<float> inv_freq(static_cast<size_t>(rotary_dim / 2));
  std::vector<double> inv_freq_reference(inv_freq.size());
  for (size_t i = 0; i < inv_freq.size(); ++i) {
    inv_freq[i] =
        static_cast<float>(1.0 / std::pow(theta, 2.0 * static_cast<double>(i) / rotary_dim));
    inv_freq_reference[i] = inv_freq[i];
  }

  const auto q = random_storage<T>(q_size, seed + 1);
  const auto k = random_storage<T>(kv_size, seed + 2);
  const auto v = random_storage<T>(kv_size, seed + 3);
  std::vector<float> expected_q = to_floats<T>(q);
  std::vector<float> expected_k = to_floats<T>(k);
  apply_rope(expected_q.data(), expected_k.data(), positions.data(), num_tokens, num_heads,
             num_kv_heads, head_dim, interleaved ? RopeLayout::Interleaved : RopeLayout::RotateHalf,
             inv_freq_reference, pool);

  const Storage<T> sentinel = ElementTraits<T>::from_float(-12345.0f);
  const std::vector<Storage<T>> empty_cache(static_cast<size_t>(num_slots) * kv_dim, sentinel);
  DeviceBuffer<Storage<T>> d_k_cache(empty_cache), d_v_cache(empty_cache);
  DeviceBuffer<int32_t> d_positions(positions);
  DeviceBuffer<int64_t> d_slot_mapping(slot_mapping);
  DeviceBuffer<float> d_inv_freq(inv_freq);
  const size_t q_dim = q_size / static_cast<size_t>(num_tokens);
  const size_t fused_dim = q_dim + 2 * kv_dim;
  // The three arrays, each in its own buffer or stacked row by row into one.
  std::vector<Storage<T>> gpu_q, gpu_k, gpu_v;
  if (fused) {
    std::vector<Storage<T>> qkv(static_cast<size_t>(num_tokens) * fused_dim);
    for (size_t t = 0; t < static_cast<size_t>(num_tokens); ++t) {
      std::copy_n(q.begin() + static_cast<ptrdiff_t>(t * q_dim), q_dim,
                  qkv.begin() + static_cast<ptrdiff_t>(t * fused_dim));
      std::copy_n(k.begin() + static_cast<ptrdiff_t>(t * kv_dim), kv_dim,
                  qkv.begin() + static_cast<ptrdiff_t>(t * fused_dim + q_dim));
      std::copy_n(v.begin() + static_cast<ptrdiff_t>(t * kv_dim), kv_dim,
                  qkv.begin() + static_cast<ptrdiff_t>(t * fused_dim + q_dim + kv_dim));
    }
    DeviceBuffer<Storage<T>> d_qkv(qkv);
    T* base = device_ptr<T>(d_qkv);
    expect_ok(kernels::rope_and_cache<T>(
        base, base + q_dim, base + q_dim + kv_dim, d_positions.get(), d_slot_mapping.get(),
        d_inv_freq.get(), interleaved, device_ptr<T>(d_k_cache), device_ptr<T>(d_v_cache),
        num_tokens, num_heads, num_kv_heads, head_dim, rotary_dim, block_size,
        static_cast<int64_t>(fused_dim), nullptr));
    const auto out = d_qkv.download();
    for (size_t t = 0; t < static_cast<size_t>(num_tokens); ++t) {
      const auto row = out.begin() + static_cast<ptrdiff_t>(t * fused_dim);
      gpu_q.insert(gpu_q.end(), row, row + static_cast<ptrdiff_t>(q_dim));
      gpu_k.insert(gpu_k.end(), row + static_cast<ptrdiff_t>(q_dim),
                   row + static_cast<ptrdiff_t>(q_dim + kv_dim));
      gpu_v.insert(gpu_v.end(), row + static_cast<ptrdiff_t>(q_dim + kv_dim),
                   row + static_cast<ptrdiff_t>(fused_dim));
    }
  } else {
    DeviceBuffer<Storage<T>> d_q(q), d_k(k), d_v(v);
    expect_ok(kernels::rope_and_cache<T>(
        device_ptr<T>(d_q), device_ptr<T>(d_k), device_ptr<T>(d_v), d_positions.get(),
        d_slot_mapping.get(), d_inv_freq.get(), interleaved, device_ptr<T>(d_k_cache),
        device_ptr<T>(d_v_cache), num_tokens, num_heads, num_kv_heads, head_dim, rotary_dim,
        block_size, 0, nullptr));
    gpu_q = d_q.download();
    gpu_k = d_k.download();
    gpu_v = d_v.download();
  }
  expect_close(to_floats<T>(gpu_q), expected_q, ElementTraits<T>::kTolerance, "q");
  expect_close(to_floats<T>(gpu_k), expected_k, ElementTraits<T>::kTolerance, "k");
  // The dimensions past rotary_dim pass through bit for bit.
  for (size_t i = 0; i < gpu_q.size(); ++i) {
    if (static_cast<int>(i % static_cast<size_t>(head_dim)) < rotary_dim) continue;
    ASSERT_EQ(gpu_q[i], q[i]) << "q[" << i << "] is past the rotary dimensions";
  }
  for (size_t i = 0; i < gpu_k.size(); ++i) {
    if (static_cast<int>(i % static_cast<size_t>(head_dim)) < rotary_dim) continue;
    ASSERT_EQ(gpu_k[i], k[i]) << "k[" << i << "] is past the rotary dimensions";
  }

  // Slot by slot: a written slot holds its token's rotated k and its v, every other slot is
  // untouched.
  std::vector<int> token_of_slot(static_cast<size_t>(num_slots), -1);
  for (int t = 0; t < num_tokens; ++t) {
    const int64_t slot = slot_mapping[static_cast<size_t>(t)];
    if (slot >= 0) token_of_slot[static_cast<size_t>(slot)] = t;
  }
  std::vector<Storage<T>> expected_k_cache = empty_cache;
  std::vector<Storage<T>> expected_v_cache = empty_cache;
  for (int slot = 0; slot < num_slots; ++slot) {
    const int t = token_of_slot[static_cast<size_t>(slot)];
    if (t < 0) continue;
    std::copy_n(gpu_k.begin() + static_cast<ptrdiff_t>(t * kv_dim), kv_dim,
                expected_k_cache.begin() + static_cast<ptrdiff_t>(slot * kv_dim));
    std::copy_n(v.begin() + static_cast<ptrdiff_t>(t * kv_dim), kv_dim,
                expected_v_cache.begin() + static_cast<ptrdiff_t>(slot * kv_dim));
  }
  expect_same_bits(d_k_cache.download(), expected_k_cache, "k_cache");
  expect_same_bits(d_v_cache.download(), expected_v_cache, "v_cache");
  expect_same_bits(gpu_v, v, "v (unchanged)");
}

TYPED_TEST(RopeCacheKernel, RopeAndCacheMatchesCpuRopeAndWritesSlots) {
  SLUICE_REQUIRE_CUDA();
  ThreadPool pool(1);
  for (const int head_dim : {8, 64, 80, 128}) {
    for (const bool interleaved : {true, false}) {
      for (const int num_tokens : kRopeTokenCounts) {
        check_rope_and_cache<TypeParam>(head_dim, interleaved, num_tokens, pool);
      }
    }
  }
}

TYPED_TEST(RopeCacheKernel, RopeAndCacheOverFusedQkvRows) {
  SLUICE_REQUIRE_CUDA();
  ThreadPool pool(1);
  // Rows of q | k | v: each token's q, k and v start mid-row, so a kernel that assumed dense
  // rows would read another token's k as its q.
  for (const int head_dim : {8, 80, 128}) {
    for (const bool interleaved : {true, false}) {
      for (const int num_tokens : kRopeTokenCounts) {
        check_rope_and_cache<TypeParam>(head_dim, interleaved, num_tokens, pool, /*fused=*/true);
      }
    }
  }
}

// Phi-3's partial_rotary_factor: only the first rotary_dim dimensions of each head rotate (in
// rotate-half layout the pairs are i and i + rotary_dim / 2), the rest pass through to q, k and
// the K cache unchanged.
TYPED_TEST(RopeCacheKernel, PartialRotaryRotatesTheFirstDimensionsOnly) {
  SLUICE_REQUIRE_CUDA();
  ThreadPool pool(1);
  for (const auto& [head_dim, rotary_dim] :
       {std::pair{96, 32}, std::pair{80, 40}, std::pair{8, 2}}) {
    for (const bool interleaved : {true, false}) {
      for (const bool fused : {false, true}) {
        check_rope_and_cache<TypeParam>(head_dim, interleaved, 7, pool, fused, rotary_dim);
      }
    }
  }
}

TYPED_TEST(RopeCacheKernel, RefusesRotaryDimensionsOutsideTheHead) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  // One token, 2 query heads and 1 KV head of 8 dimensions; a cache of one block of 16 slots.
  const int head_dim = 8;
  DeviceBuffer<Storage<T>> d_q(16), d_k(8), d_v(8), d_k_cache(128), d_v_cache(128);
  DeviceBuffer<int32_t> d_positions(std::vector<int32_t>{0});
  DeviceBuffer<int64_t> d_slots(std::vector<int64_t>{0});
  DeviceBuffer<float> d_inv_freq(std::vector<float>(head_dim / 2, 1.0f));
  for (const int rotary_dim : {0, 3, 10}) {
    EXPECT_NE(kernels::rope_and_cache<T>(device_ptr<T>(d_q), device_ptr<T>(d_k), device_ptr<T>(d_v),
                                         d_positions.get(), d_slots.get(), d_inv_freq.get(), false,
                                         device_ptr<T>(d_k_cache), device_ptr<T>(d_v_cache), 1, 2,
                                         1, head_dim, rotary_dim, 16, 0, nullptr),
              kernels::kKernelOk)
        << "rotary_dim " << rotary_dim << " of a head of " << head_dim;
  }
}

}  // namespace
}  // namespace sluice
