#include "engine/backend/cuda/cuda_device.h"

#include <cuda_runtime.h>

namespace sluice {

CudaProbe probe_cuda_devices() {
  CudaProbe probe;
  cudaDriverGetVersion(&probe.driver_version);
  cudaRuntimeGetVersion(&probe.runtime_version);
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    probe.error = std::string("no usable GPU: ") + cudaGetErrorString(status);
    cudaGetLastError();  // clear the sticky error so later calls start clean
    return probe;
  }
  if (count == 0) {
    probe.error = "no usable GPU: the CUDA runtime reports no devices";
    return probe;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    CudaDeviceInfo info;
    info.index = i;
    info.name = prop.name;
    info.compute_capability_major = prop.major;
    info.compute_capability_minor = prop.minor;
    info.total_memory_bytes = prop.totalGlobalMem;
    if (cudaSetDevice(i) == cudaSuccess) {
      size_t free_bytes = 0, total_bytes = 0;
      if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
        info.free_memory_bytes = free_bytes;
    }
    probe.devices.push_back(std::move(info));
  }
  if (probe.devices.empty()) probe.error = "no usable GPU: no device could be queried";
  return probe;
}

int count_cuda_devices(std::string& why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    why = std::string("no usable GPU: ") + cudaGetErrorString(status);
    cudaGetLastError();
    return 0;
  }
  if (count == 0) why = "no usable GPU: the CUDA runtime reports no devices";
  return count;
}

}  // namespace sluice
