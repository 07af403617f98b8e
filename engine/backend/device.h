// Which compute devices this build can use, available with or without CUDA compiled in.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace sluice {

// One device a run can name.
struct DeviceOption {
  std::string id;     // "cuda:0": what --device takes
  std::string label;  // "cuda:0 NVIDIA H100 80GB HBM3 (sm_90, 81559 MiB)"
  size_t total_memory_bytes = 0;
};

struct DeviceReport {
  bool cuda_compiled = false;  // the build has the CUDA backend
  bool cuda_usable = false;    // at least one device answered
  std::string summary;         // one line for --version and logs
  std::vector<DeviceOption> devices;  // the usable CUDA devices
};

// Probes devices once; never throws.
DeviceReport probe_devices();

// Returns the device index of "cuda" (0) or "cuda:N"; throws Error for other text.
int parse_cuda_device(const std::string& device);

// Resolves a --device value ("cpu", "auto", "cuda", "cuda:N"): -1 for the CPU ("cpu", or "auto"
// when there is no usable GPU), else the CUDA device index. Throws Error naming the device when
// it is unknown, absent, or needs the CUDA backend this build lacks. Cheap enough to call before
// loading a model, so a run is refused before it starts.
int resolve_device(const std::string& device);

}  // namespace sluice
