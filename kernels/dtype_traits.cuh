// Private helpers shared by the kernels in this folder (never included by the engine): the
// element types' conversions to and from float, the 16-byte pack that vectorised loads and
// stores move, and the launch bookkeeping every launcher repeats.
//
// Every op converts through float, so a kernel body is written once for T and bf16 needs no
// sm_80 arithmetic: __bfloat162float / __float2bfloat16 are plain bit operations on sm_75.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "kernels/launch.cuh"
#include "kernels/status.h"

namespace sluice::kernels::detail {

template <typename T>
struct DTypeTraits;

template <>
struct DTypeTraits<float> {
  static __device__ __forceinline__ float to_float(float x) { return x; }
  static __device__ __forceinline__ float from_float(float x) { return x; }
};

template <>
struct DTypeTraits<__nv_bfloat16> {
  static __device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
  // Round to nearest even, as engine/core/dtype.h's f32_to_bf16 does.
  static __device__ __forceinline__ __nv_bfloat16 from_float(float x) {
    return __float2bfloat16_rn(x);
  }
};

template <>
struct DTypeTraits<__half> {
  static __device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
  // Round to nearest even, overflow to inf, as engine/core/dtype.h's f32_to_f16 does.
  static __device__ __forceinline__ __half from_float(float x) { return __float2half_rn(x); }
};

template <typename T>
__device__ __forceinline__ float to_float(T x) {
  return DTypeTraits<T>::to_float(x);
}

template <typename T>
__device__ __forceinline__ T from_float(float x) {
  return DTypeTraits<T>::from_float(x);
}

// 16 bytes of T (4 floats or 8 halves): one 128-bit load or store when the address is aligned.
template <typename T>
struct alignas(16) Pack {
  static constexpr int kSize = 16 / static_cast<int>(sizeof(T));
  T values[kSize];
};

// N consecutive values of T moved as one unit (N * sizeof(T) must be a power of two): 8 floats
// are two 128-bit accesses, 8 halves one.
template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T values[N];
};

__host__ __device__ inline bool is_aligned_16(const void* pointer) {
  return reinterpret_cast<uintptr_t>(pointer) % 16 == 0;
}

__host__ __device__ inline bool is_aligned(const void* pointer, size_t alignment) {
  return reinterpret_cast<uintptr_t>(pointer) % alignment == 0;
}

// The first item of this thread in a grid-stride loop, and the loop's stride.
__device__ __forceinline__ int64_t global_thread_idx() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// Blocks for a grid-stride loop over num_items with threads per block; the cap keeps the grid
// a few waves deep on any GPU, and the loop covers the rest.
inline unsigned int grid_stride_blocks(int64_t num_items, int threads) {
  constexpr int64_t kMaxBlocks = 8192;
  const int64_t blocks = (num_items + threads - 1) / threads;
  return static_cast<unsigned int>(blocks < kMaxBlocks ? (blocks > 0 ? blocks : 1) : kMaxBlocks);
}

// Returns the status of the launch just made (and clears a pending launch error).
inline KernelStatus launch_status() {
  return static_cast<KernelStatus>(cudaGetLastError());
}

inline KernelStatus invalid_argument() {
  return static_cast<KernelStatus>(cudaErrorInvalidValue);
}

// Lets kKernel launch with `bytes` of dynamic shared memory: above 48 KiB a kernel must opt in
// (every GPU this code runs on allows at least 64 KiB). The setting is per device and kernel, so
// it is made once per device (at the first launch, before any graph's capture: the backend's
// first steps run eagerly), not on every launch.
template <auto kKernel>
cudaError_t allow_dynamic_shared(size_t bytes) {
  constexpr size_t kStaticLimit = 48 * 1024;
  constexpr int kTrackedDevices = 64;  // devices whose opt-in is remembered (others: every launch)
  if (bytes <= kStaticLimit) return cudaSuccess;
  static std::atomic<size_t> granted[kTrackedDevices] = {};
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return status;
  const bool is_tracked = device >= 0 && device < kTrackedDevices;
  if (is_tracked && granted[device].load(std::memory_order_acquire) >= bytes) return cudaSuccess;
  status = cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                static_cast<int>(bytes));
  if (status == cudaSuccess && is_tracked) granted[device].store(bytes, std::memory_order_release);
  return status;
}

}  // namespace sluice::kernels::detail
