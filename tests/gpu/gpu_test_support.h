// For GPU tests: skip (never pass) when no CUDA device is usable, and small device helpers.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

namespace sluice::test {

// True where the tests run on the CPU kernel emulator (tests/emulator, ctest label emulator),
// which runs kernels about a million times slower than a GPU: the engine runs there use fewer
// prompts, the same code paths.
#ifdef SLUICE_KERNEL_EMULATOR
inline constexpr bool kIsEmulated = true;
#else
inline constexpr bool kIsEmulated = false;
#endif

// Returns "" when a CUDA device is usable, else why not.
inline std::string cuda_unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return cudaGetErrorString(status);
  }
  return count > 0 ? "" : "the CUDA runtime reports no devices";
}

// GTEST_SKIP with the reason when there is no device; use at the top of every GPU test.
#define SLUICE_REQUIRE_CUDA()                                                          \
  do {                                                                                 \
    const std::string reason = ::sluice::test::cuda_unavailable_reason();              \
    if (!reason.empty()) GTEST_SKIP() << "skipped: no CUDA device (" << reason << ")"; \
  } while (0)

// Fails the test with the CUDA error text when status is not cudaSuccess.
#define SLUICE_CUDA_OK(expr)                                                         \
  do {                                                                               \
    const cudaError_t status_ = (expr);                                              \
    ASSERT_EQ(status_, cudaSuccess) << #expr << ": " << cudaGetErrorString(status_); \
  } while (0)

// A device buffer of T, freed on destruction.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t n) : n_(n) {
    if (cudaMalloc(&ptr_, n * sizeof(T) + 1) != cudaSuccess) ptr_ = nullptr;
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return ptr_; }
  size_t size() const { return n_; }
  void upload(const std::vector<T>& host) {
    cudaMemcpy(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    cudaMemcpy(host.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost);
    return host;
  }

 private:
  T* ptr_ = nullptr;
  size_t n_ = 0;
};

// How many of the first `count` floats of a and b differ in their bits (+0 and -0 differ; a NaN
// matches only a NaN of the same bits).
inline size_t count_different_bits(const float* a, const float* b, size_t count) {
  size_t different = 0;
  for (size_t i = 0; i < count; ++i) different += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return different;
}

}  // namespace sluice::test
