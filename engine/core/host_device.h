// SLUICE_HOST_DEVICE marks a function in engine/core that CUDA kernels call too: __host__
// __device__ under nvcc, nothing for the host compiler (and the kernel emulator, which compiles
// device code as host C++).
#pragma once

#if defined(__CUDACC__)
#define SLUICE_HOST_DEVICE __host__ __device__
#else
#define SLUICE_HOST_DEVICE
#endif
