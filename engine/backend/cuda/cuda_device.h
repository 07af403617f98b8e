// Detects CUDA devices. Sluice builds without CUDA too; this header is only compiled in when
// SLUICE_HAS_CUDA is defined (see engine/backend/device.h for the always-available facade).
#pragma once

#include <string>
#include <vector>

namespace sluice {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  size_t total_memory_bytes = 0;
  size_t free_memory_bytes = 0;
};

struct CudaProbe {
  std::vector<CudaDeviceInfo> devices;
  int driver_version = 0;  // 0 when no driver is installed
  int runtime_version = 0;
  std::string error;  // why no device is usable, empty when at least one is
};

// Asks the CUDA runtime for devices; never throws, never aborts when there is no driver or GPU.
CudaProbe probe_cuda_devices();

// Returns how many CUDA devices the runtime sees without creating a context on any of them
// (0 with `why` set when there is no driver or no device); never throws.
int count_cuda_devices(std::string& why);

}  // namespace sluice
