// The CPU kernel emulator's launch_kernel and SLUICE_DYNAMIC_SHARED (kernels/launch.cuh includes
// this when SLUICE_KERNEL_EMULATOR is defined): the grid is queued on the stream and runs on the
// CPU when the host waits for the stream.
#pragma once

#include <cstddef>
#include <utility>

#include "cuda_runtime.h"

namespace sluice::kernels::detail {

template <typename... Params, typename... Args>
inline void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                          cudaStream_t stream, Args&&... args) {
  ::emu::launch(kernel, grid, block, shared_bytes, stream, std::forward<Args>(args)...);
}

}  // namespace sluice::kernels::detail

#define SLUICE_DYNAMIC_SHARED(type, name) type* name = ::emu::dynamic_shared<type>()
