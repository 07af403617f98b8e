// Kernel launchers return a KernelStatus: 0 on success, otherwise the cudaError_t value of the
// failed launch, so callers turn it into text with cudaGetErrorString.
#pragma once

namespace sluice::kernels {

using KernelStatus = int;
inline constexpr KernelStatus kKernelOk = 0;

}  // namespace sluice::kernels
