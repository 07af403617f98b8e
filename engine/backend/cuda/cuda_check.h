// Checks of CUDA runtime calls and kernel launches: a failure throws sluice::Error naming the
// call as written, where it was made (file:line) and the runtime's text for the error, e.g.
//   CUDA error: cudaMalloc(&ptr, bytes) at engine/backend/cuda/cuda_buffer.h:41: out of memory
// Every CUDA call of the backend goes through SLUICE_CUDA_CHECK or SLUICE_KERNEL_CHECK.
#pragma once

#include <cuda_runtime.h>

#include <cstring>

#include "engine/core/error.h"
#include "kernels/status.h"

namespace sluice::cuda_detail {

// Returns the path from its "engine/" or "app/" component on, so messages do not carry the
// build machine's directories.
inline const char* short_path(const char* file) {
  for (const char* marker : {"/engine/", "/app/", "/tests/"}) {
    if (const char* p = std::strstr(file, marker)) return p + 1;
  }
  return file;
}

[[noreturn]] inline void throw_cuda_error(const char* what, const char* call, const char* file,
                                          int line, cudaError_t status) {
  // Clears a non-sticky error so the next call does not report it again.
  cudaGetLastError();
  fail(what, ": ", call, " at ", short_path(file), ":", line, ": ", cudaGetErrorString(status),
       " (", cudaGetErrorName(status), ")");
}

}  // namespace sluice::cuda_detail

// Throws sluice::Error when a CUDA runtime call does not return cudaSuccess.
#define SLUICE_CUDA_CHECK(call)                                                        \
  do {                                                                                 \
    const cudaError_t sluice_status_ = (call);                                         \
    if (sluice_status_ != cudaSuccess) {                                               \
      ::sluice::cuda_detail::throw_cuda_error("CUDA error", #call, __FILE__, __LINE__, \
                                              sluice_status_);                         \
    }                                                                                  \
  } while (0)

// Throws sluice::Error when a kernel launcher (kernels/*.cuh) returns a failed status.
#define SLUICE_KERNEL_CHECK(call)                                                                  \
  do {                                                                                             \
    const ::sluice::kernels::KernelStatus sluice_status_ = (call);                                 \
    if (sluice_status_ != ::sluice::kernels::kKernelOk) {                                          \
      ::sluice::cuda_detail::throw_cuda_error("CUDA kernel launch failed", #call, __FILE__,        \
                                              __LINE__, static_cast<cudaError_t>(sluice_status_)); \
    }                                                                                              \
  } while (0)
