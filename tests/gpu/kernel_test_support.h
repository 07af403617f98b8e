// Host-side helpers of the kernel tests (kernel_ops_test.cpp, dequantize_kernel_test.cpp): the
// element types the kernels run in, their storage and conversions, random inputs, and checks.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/core/quant_blocks.h"
#include "kernels/status.h"
#include "tests/gpu/gpu_test_support.h"

namespace sluice::kernel_test {

using test::DeviceBuffer;

// The byte offsets of the fp16 fields (scales and mins) of a quantized type's block.
inline std::vector<size_t> half_fields(DType dtype) {
  using namespace quant;
  switch (dtype) {
    case DType::Q8_0:
      return {offsetof(BlockQ8_0, d)};
    case DType::Q4_0:
      return {offsetof(BlockQ4_0, d)};
    case DType::Q4_1:
      return {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)};
    case DType::Q5_0:
      return {offsetof(BlockQ5_0, d)};
    case DType::Q5_1:
      return {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)};
    case DType::Q2_K:
      return {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)};
    case DType::Q3_K:
      return {offsetof(BlockQ3_K, d)};
    case DType::Q4_K:
      return {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)};
    case DType::Q5_K:
      return {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)};
    case DType::Q6_K:
      return {offsetof(BlockQ6_K, d)};
    default:
      return {};
  }
}

// num_blocks random blocks of dtype: random bytes (every quant value, scale and bit pattern),
// with the fp16 fields set to finite values of either sign over a wide range, since a NaN's
// payload need not survive the device's arithmetic (MXFP4: its exponent byte in that range).
// The fp16 fields' magnitudes are 2^e for e uniform in [min_exponent, max_exponent).
inline std::vector<uint8_t> random_blocks(DType dtype, int64_t num_blocks, uint32_t seed,
                                          float min_exponent = -24.0f, float max_exponent = 4.0f) {
  const DTypeTraits& traits = dtype_traits(dtype);
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(static_cast<size_t>(num_blocks) * traits.block_bytes);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> exponent(min_exponent, max_exponent);
  for (int64_t b = 0; b < num_blocks; ++b) {
    // MXFP4's scale is the E8M0 byte 2^(e - 128): the same range of exponents, the values'
    // magnitudes up to 12 times that.
    if (dtype == DType::MXFP4) {
      bytes[static_cast<size_t>(b) * traits.block_bytes] =
          static_cast<uint8_t>(128 + static_cast<int>(std::floor(exponent(rng))));
    }
    for (const size_t field : half_fields(dtype)) {
      const float value = (rng() % 2 == 0 ? 1.0f : -1.0f) * std::exp2(exponent(rng));
      const uint16_t bits = f32_to_f16(value);
      std::memcpy(bytes.data() + static_cast<size_t>(b) * traits.block_bytes + field, &bits, 2);
    }
  }
  return bytes;
}

// Host side of an element type: its storage and conversions (engine/core/dtype.h, which round
// to nearest even as the kernels do) and the tolerance of results computed in it.
template <typename T>
struct ElementTraits;

template <>
struct ElementTraits<float> {
  using Storage = float;
  static constexpr double kTolerance = 1e-4;
  static Storage from_float(float x) { return x; }
  static float to_float(Storage x) { return x; }
};

template <>
struct ElementTraits<__nv_bfloat16> {
  using Storage = uint16_t;
  static constexpr double kTolerance = 2e-2;
  static Storage from_float(float x) { return f32_to_bf16(x); }
  static float to_float(Storage x) { return bf16_to_f32(x); }
};

template <>
struct ElementTraits<__half> {
  using Storage = uint16_t;
  static constexpr double kTolerance = 2e-2;
  static Storage from_float(float x) { return f32_to_f16(x); }
  static float to_float(Storage x) { return f16_to_f32(x); }
};

template <typename T>
using Storage = typename ElementTraits<T>::Storage;

template <typename T>
std::vector<Storage<T>> to_storage(const std::vector<float>& values) {
  std::vector<Storage<T>> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = ElementTraits<T>::from_float(values[i]);
  return out;
}

template <typename T>
std::vector<float> to_floats(const std::vector<Storage<T>>& values) {
  std::vector<float> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = ElementTraits<T>::to_float(values[i]);
  return out;
}

// The device pointer of a buffer of T's storage, as T.
template <typename T>
T* device_ptr(const DeviceBuffer<Storage<T>>& buffer) {
  return reinterpret_cast<T*>(buffer.get());
}

inline std::vector<float> random_values(size_t n, uint32_t seed, float low, float high) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> values(n);
  for (float& v : values) v = dist(rng);
  return values;
}

// Values of T drawn in [low, high), already rounded to T (so the reference sees the same inputs).
template <typename T>
std::vector<Storage<T>> random_storage(size_t n, uint32_t seed, float low = -2.0f,
                                       float high = 2.0f) {
  return to_storage<T>(random_values(n, seed, low, high));
}

// Expects |actual - expected| <= tolerance * (1 + |expected|) everywhere; reports the first few
// misses with their index.
inline void expect_close(const std::vector<float>& actual, const std::vector<float>& expected,
                         double tolerance, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int num_bad = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(actual[i]) - expected[i]);
    if (!(diff <= tolerance * (1.0 + std::fabs(static_cast<double>(expected[i]))))) {
      if (++num_bad <= 5) {
        ADD_FAILURE() << what << "[" << i << "]: gpu " << actual[i] << ", reference "
                      << expected[i];
      }
    }
  }
  EXPECT_EQ(num_bad, 0) << what << ": " << num_bad << " of " << actual.size()
                        << " out of tolerance";
}

// Expects the same bit patterns everywhere; reports the first few differences.
template <typename S>
void expect_same_bits(const std::vector<S>& actual, const std::vector<S>& expected,
                      const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int num_bad = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::memcmp(&actual[i], &expected[i], sizeof(S)) != 0) {
      if (++num_bad <= 5) ADD_FAILURE() << what << "[" << i << "] differs";
    }
  }
  EXPECT_EQ(num_bad, 0) << what << ": " << num_bad << " of " << actual.size() << " differ";
}

inline void expect_ok(kernels::KernelStatus status) {
  ASSERT_EQ(status, kernels::kKernelOk) << cudaGetErrorString(static_cast<cudaError_t>(status));
  const cudaError_t sync = cudaDeviceSynchronize();
  ASSERT_EQ(sync, cudaSuccess) << cudaGetErrorString(sync);
}

struct ElementTypeNames {
  template <typename T>
  static std::string GetName(int) {
    if (std::is_same_v<T, float>) return "F32";
    if (std::is_same_v<T, __nv_bfloat16>) return "BF16";
    return "F16";
  }
};

using ElementTypes = ::testing::Types<float, __nv_bfloat16, __half>;

}  // namespace sluice::kernel_test
