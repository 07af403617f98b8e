// The one place a kernel launch is spelled out: launch_kernel(kernel, grid, block, shared_bytes,
// stream, args...) and SLUICE_DYNAMIC_SHARED(type, name) for a kernel's dynamic shared memory.
// With SLUICE_KERNEL_EMULATOR defined, the CPU kernel emulator (tests/emulator, on the include
// path first) supplies both, so the same kernel sources also run as host code in CI.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#ifdef SLUICE_KERNEL_EMULATOR
#include "kernel_emulator_launch.h"
#else

namespace sluice::kernels::detail {

// Launches kernel<<<grid, block, shared_bytes, stream>>>(args...); the arguments convert to the
// kernel's parameter types as in a direct launch. Check the result with cudaGetLastError.
template <typename... Params, typename... Args>
inline void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                          cudaStream_t stream, Args&&... args) {
  kernel<<<grid, block, shared_bytes, stream>>>(std::forward<Args>(args)...);
}

}  // namespace sluice::kernels::detail

// Declares name as the kernel's dynamic shared memory, an array of type.
#define SLUICE_DYNAMIC_SHARED(type, name) extern __shared__ type name[]

#endif
