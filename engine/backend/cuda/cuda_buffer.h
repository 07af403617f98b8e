// Owning handles for device memory, pinned host memory, streams and events, and a guard that
// makes the backend's device current on whatever thread calls it (the engine may be stepped
// from a worker thread other than the one that built it).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "engine/backend/cuda/cuda_check.h"

namespace sluice {

// Device memory of a fixed size; empty when default-constructed.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Allocates bytes (at least 1) on the current device; throws Error naming what it is for.
  DeviceBuffer(size_t bytes, const char* what) : bytes_(bytes) {
    const cudaError_t status = cudaMalloc(&ptr_, bytes == 0 ? 1 : bytes);
    if (status != cudaSuccess) {
      cudaGetLastError();
      ptr_ = nullptr;
      fail("CUDA: cannot allocate ", (bytes + (1 << 20) - 1) >> 20, " MiB of device memory for ",
           what, ": ", cudaGetErrorString(status));
    }
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      ptr_ = std::exchange(other.ptr_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void reset() {
    if (ptr_) cudaFree(ptr_);  // errors on free are not actionable (and must not throw here)
    ptr_ = nullptr;
    bytes_ = 0;
  }
  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Page-locked host memory (fast, asynchronous copies to and from the device).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t bytes) : bytes_(bytes) {
    SLUICE_CUDA_CHECK(cudaMallocHost(&ptr_, bytes == 0 ? 1 : bytes));
  }
  ~PinnedBuffer() {
    if (ptr_) cudaFreeHost(ptr_);
  }
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    if (this != &other) {
      if (ptr_) cudaFreeHost(ptr_);
      ptr_ = std::exchange(other.ptr_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  unsigned char* data() const { return static_cast<unsigned char*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

class CudaStream {
 public:
  CudaStream() { SLUICE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~CudaStream() {
    if (stream_) cudaStreamDestroy(stream_);
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class CudaEvent {
 public:
  explicit CudaEvent(unsigned flags = cudaEventDisableTiming) {
    SLUICE_CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags));
  }
  ~CudaEvent() {
    if (event_) cudaEventDestroy(event_);
  }
  CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&&) = delete;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Makes device_index current for the scope (and restores nothing: every entry point of the
// backend sets it, which costs a few nanoseconds when it is already current).
inline void make_device_current(int device_index) {
  SLUICE_CUDA_CHECK(cudaSetDevice(device_index));
}

// Rounds bytes up to a multiple of 256, the alignment every sub-allocation keeps.
inline constexpr size_t align_256(size_t bytes) {
  return (bytes + 255) & ~size_t{255};
}

}  // namespace sluice
