// The CPU kernel emulator's launch_kernel and SLUICE_DYNAMIC_SHARED (kernels/launch.cuh includes
// this when SLUICE_KERNEL_EMULATOR is defined): the launch runs the grid on the CPU at once.
#pragma once

#include <cstddef>
#include <utility>

#include "kernel_emulator.h"

namespace sluice::kernels::detail {

template <typename... Params, typename... Args>
inline void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                          cudaStream_t /*stream*/, Args&&... args) {
  ::emu::launch(kernel, grid, block, shared_bytes, std::forward<Args>(args)...);
}

}  // namespace sluice::kernels::detail

#define SLUICE_DYNAMIC_SHARED(type, name) type* name = ::emu::dynamic_shared<type>()
