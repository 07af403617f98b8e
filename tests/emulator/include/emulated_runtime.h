// The CPU kernel emulator's runtime API: one emulated device whose memory is host memory, with a
// capacity (SLUICE_EMULATED_GPU_MEMORY_MB, default 2048) that cudaMalloc and cudaMemGetInfo
// respect; streams, events and graphs over emulated_streams.h. Copies follow CUDA's rules on
// when host memory is read or written: a copy from pageable memory reads it at the call, one from
// pinned memory (cudaMallocHost) when the stream reaches it; a copy to pageable memory returns
// once done, one to pinned memory when the stream reaches it.
#pragma once

#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernel_emulator.h"

namespace emu {

struct Allocation {
  size_t bytes = 0;
  bool is_mapped = false;  // mmap'd (large, starts as zeros) rather than aligned_alloc'd
};

struct Memory {
  size_t capacity = 0;
  size_t used = 0;
  std::map<const char*, Allocation> device;  // start -> allocation
  std::map<const char*, size_t> pinned;      // start -> bytes
};
inline Memory& memory() {
  static Memory m = [] {
    Memory fresh;
    const char* mb = std::getenv("SLUICE_EMULATED_GPU_MEMORY_MB");
    fresh.capacity = static_cast<size_t>(mb ? std::strtoull(mb, nullptr, 10) : 2048) << 20;
    return fresh;
  }();
  return m;
}

constexpr size_t kPoisonedAllocationLimit = 64u << 20;

// Returns the size of the range in ranges (start -> size) that holds pointer, or 0.
template <typename T, typename SizeOf>
size_t size_of_range_at(const std::map<const char*, T>& ranges, const void* pointer,
                        SizeOf size_of) {
  const char* p = static_cast<const char*>(pointer);
  auto it = ranges.upper_bound(p);
  if (it == ranges.begin()) return 0;
  --it;
  return p < it->first + size_of(it->second) ? size_of(it->second) : 0;
}
inline bool is_device(const void* p) {
  return size_of_range_at(memory().device, p, [](const Allocation& a) { return a.bytes; }) > 0;
}
inline bool is_pinned(const void* p) {
  return size_of_range_at(memory().pinned, p, [](size_t bytes) { return bytes; }) > 0;
}

inline double now_ms() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
}

// Operations that may not happen while a stream is captured (they would synchronise or
// allocate): they invalidate the capture and fail, as in CUDA's global and thread-local modes.
inline bool refuse_during_capture() {
  if (capture().stream == nullptr) return false;
  capture().is_invalidated = true;
  return true;
}

}  // namespace emu

// ---- errors ----------------------------------------------------------------------------------

inline const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
      return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration:
      return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice:
      return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle:
      return "cudaErrorInvalidResourceHandle";
    case cudaErrorIllegalState:
      return "cudaErrorIllegalState";
    case cudaErrorStreamCaptureUnsupported:
      return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated:
      return "cudaErrorStreamCaptureInvalidated";
  }
  return "cudaErrorUnknown";
}
inline const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
    case cudaErrorInvalidDevice:
      return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle:
      return "invalid resource handle";
    case cudaErrorIllegalState:
      return "the operation cannot be performed in the present state";
    case cudaErrorStreamCaptureUnsupported:
      return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated:
      return "operation failed due to a previous error during capture";
  }
  return "unknown error";
}
inline cudaError_t cudaGetLastError() {
  const int error = emu::pending_error;
  emu::pending_error = cudaSuccess;
  return static_cast<cudaError_t>(error);
}
inline cudaError_t cudaPeekAtLastError() {
  return static_cast<cudaError_t>(emu::pending_error);
}

// ---- the device ------------------------------------------------------------------------------

inline cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int device) {
  return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}
inline cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "Sluice CPU kernel emulator");
  prop->totalGlobalMem = emu::memory().capacity;
  prop->sharedMemPerBlock = emu::kDefaultDynamicSharedBytes;
  prop->sharedMemPerBlockOptin = emu::kMaxOptInSharedBytes;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->multiProcessorCount = 1;
  prop->major = 9;
  prop->minor = 0;
  return cudaSuccess;
}
inline cudaError_t cudaDriverGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}
inline cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() {
  if (emu::refuse_during_capture()) return cudaErrorStreamCaptureUnsupported;
  emu::flush_all();
  return cudaSuccess;
}
inline cudaError_t cudaFuncSetAttributeImpl(const void* kernel, cudaFuncAttribute attribute,
                                            int value) {
  if (attribute != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 ||
      value > emu::kMaxOptInSharedBytes) {
    return cudaErrorInvalidValue;
  }
  emu::max_dynamic_shared()[kernel] = value;
  return cudaSuccess;
}
template <typename... Params>
cudaError_t cudaFuncSetAttribute(void (*kernel)(Params...), cudaFuncAttribute attribute,
                                 int value) {
  return cudaFuncSetAttributeImpl(reinterpret_cast<const void*>(kernel), attribute, value);
}

// ---- memory ----------------------------------------------------------------------------------

inline cudaError_t cudaMalloc(void** pointer, size_t bytes) {
  *pointer = nullptr;
  if (emu::refuse_during_capture()) return cudaErrorStreamCaptureUnsupported;
  emu::Memory& m = emu::memory();
  const size_t rounded = (bytes + 255) / 256 * 256 + 256;
  if (rounded > m.capacity - m.used) return cudaErrorMemoryAllocation;
  emu::Allocation allocation{rounded, rounded > emu::kPoisonedAllocationLimit};
  void* p = nullptr;
  if (allocation.is_mapped) {
    p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) p = nullptr;
  } else {
    p = std::aligned_alloc(256, rounded);
    if (p != nullptr) std::memset(p, emu::kPoison, rounded);
  }
  if (p == nullptr) return cudaErrorMemoryAllocation;
  m.used += rounded;
  m.device.emplace(static_cast<const char*>(p), allocation);
  *pointer = p;
  return cudaSuccess;
}
template <typename T>
cudaError_t cudaMalloc(T** pointer, size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(pointer), bytes);
}
// Waits for the device first (queued work may still use the memory), as cudaFree does.
inline cudaError_t cudaFree(void* pointer) {
  if (pointer == nullptr) return cudaSuccess;
  if (emu::refuse_during_capture()) return cudaErrorStreamCaptureUnsupported;
  emu::flush_all();
  emu::Memory& m = emu::memory();
  const auto it = m.device.find(static_cast<const char*>(pointer));
  if (it == m.device.end()) return cudaErrorInvalidValue;
  if (it->second.is_mapped) {
    munmap(pointer, it->second.bytes);
  } else {
    std::free(pointer);
  }
  m.used -= it->second.bytes;
  m.device.erase(it);
  return cudaSuccess;
}
inline cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  *free_bytes = emu::memory().capacity - emu::memory().used;
  *total_bytes = emu::memory().capacity;
  return cudaSuccess;
}
inline cudaError_t cudaMallocHost(void** pointer, size_t bytes) {
  *pointer = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (*pointer == nullptr) return cudaErrorMemoryAllocation;
  std::memset(*pointer, emu::kPoison, bytes);
  emu::memory().pinned.emplace(static_cast<const char*>(*pointer), bytes);
  return cudaSuccess;
}
template <typename T>
cudaError_t cudaMallocHost(T** pointer, size_t bytes) {
  return cudaMallocHost(reinterpret_cast<void**>(pointer), bytes);
}
inline cudaError_t cudaFreeHost(void* pointer) {
  if (pointer == nullptr) return cudaSuccess;
  emu::flush_all();
  if (emu::memory().pinned.erase(static_cast<const char*>(pointer)) == 0)
    return cudaErrorInvalidValue;
  std::free(pointer);
  return cudaSuccess;
}

inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind,
                                   cudaStream_t stream = nullptr) {
  if (bytes == 0) return cudaSuccess;
  const bool is_capturing = emu::capture().stream == &emu::stream_of(stream);
  if (!is_capturing && !emu::is_device(src) && !emu::is_pinned(src)) {
    // Pageable source: staged at the call, so the caller may reuse it at once.
    auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src),
                                                      static_cast<const char*>(src) + bytes);
    emu::submit(stream, [dst, staged] { std::memcpy(dst, staged->data(), staged->size()); });
  } else {
    emu::submit(stream, [dst, src, bytes] { std::memcpy(dst, src, bytes); });
  }
  if (!is_capturing && !emu::is_device(dst) && !emu::is_pinned(dst)) {
    emu::flush(emu::stream_of(stream));  // to pageable memory: returns once the copy is done
  }
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (emu::refuse_during_capture()) return cudaErrorStreamCaptureUnsupported;
  const cudaError_t status = cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
  emu::flush(emu::legacy_stream());
  return status;
}
inline cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes,
                                   cudaStream_t stream = nullptr) {
  emu::submit(stream, [dst, value, bytes] { std::memset(dst, value, bytes); });
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* dst, int value, size_t bytes) {
  if (emu::refuse_during_capture()) return cudaErrorStreamCaptureUnsupported;
  cudaMemsetAsync(dst, value, bytes, nullptr);
  emu::flush(emu::legacy_stream());
  return cudaSuccess;
}

// ---- streams ---------------------------------------------------------------------------------

inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  *stream = new CUstream_st;
  (*stream)->is_non_blocking = (flags & cudaStreamNonBlocking) != 0;
  emu::live_streams().insert(*stream);
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}
inline cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (stream == nullptr || emu::live_streams().erase(stream) == 0)
    return cudaErrorInvalidResourceHandle;
  emu::flush(*stream);  // queued work still completes
  delete stream;
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (emu::refuse_during_capture()) return cudaErrorStreamCaptureUnsupported;
  emu::flush(emu::stream_of(stream));
  return cudaSuccess;
}

// ---- events ----------------------------------------------------------------------------------

inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int) {
  *event = new CUevent_st;
  return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}
inline cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr) {
  if (event == nullptr) return cudaErrorInvalidResourceHandle;
  event->stream = &emu::stream_of(stream);
  const unsigned long long record = ++event->recorded;
  emu::submit(stream, [event, record] {
    event->generation = record;
    event->ms = emu::now_ms();
  });
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (event == nullptr) return cudaErrorInvalidResourceHandle;
  if (event->stream != nullptr) {
    const unsigned long long record = event->recorded;
    emu::run_stream(*event->stream, [event, record] { return event->generation >= record; });
  }
  return cudaSuccess;
}
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  *ms = static_cast<float>(end->ms - start->ms);
  return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (event == nullptr) return cudaErrorInvalidResourceHandle;
  if (event->stream != nullptr) cudaEventSynchronize(event);  // a queued record refers to it
  delete event;
  return cudaSuccess;
}

// ---- graphs ----------------------------------------------------------------------------------

inline cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
  if (stream == nullptr) return cudaErrorStreamCaptureUnsupported;  // not the legacy stream
  if (emu::capture().stream != nullptr) return cudaErrorIllegalState;
  emu::capture() = emu::Capture{stream, false, {}};
  return cudaSuccess;
}
inline cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  *graph = nullptr;
  if (emu::capture().stream == nullptr || emu::capture().stream != stream)
    return cudaErrorIllegalState;
  emu::Capture done = std::move(emu::capture());
  emu::capture() = emu::Capture{};
  if (done.is_invalidated) return cudaErrorStreamCaptureInvalidated;
  *graph = new CUgraph_st{std::move(done.nodes)};
  return cudaSuccess;
}
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                        unsigned long long = 0) {
  if (graph == nullptr) return cudaErrorInvalidValue;
  *exec = new CUgraphExec_st{graph->nodes};
  return cudaSuccess;
}
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (exec == nullptr) return cudaErrorInvalidResourceHandle;
  for (const auto& node : exec->nodes) emu::submit(stream, node);
  return cudaSuccess;
}
inline cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return cudaSuccess;
}
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}
