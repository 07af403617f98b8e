#include "engine/backend/device.h"

#include "engine/core/error.h"

#ifdef SLUICE_HAS_CUDA
#include "engine/backend/cuda/cuda_device.h"
#endif

namespace sluice {

DeviceReport probe_devices() {
  DeviceReport report;
#ifdef SLUICE_HAS_CUDA
  report.cuda_compiled = true;
  const CudaProbe probe = probe_cuda_devices();
  if (probe.devices.empty()) {
    report.summary = probe.error;
  } else {
    report.cuda_usable = true;
    for (const auto& d : probe.devices) {
      DeviceOption option;
      option.id = str_cat("cuda:", d.index);
      option.label = str_cat(option.id, " ", d.name, " (sm_", d.compute_capability_major, d.compute_capability_minor,
                             ", ", d.total_memory_bytes >> 20, " MiB)");
      if (!report.summary.empty()) report.summary += "; ";
      report.summary += option.label;
      report.devices.push_back(std::move(option));
    }
  }
#else
  report.summary = "CUDA backend not compiled in";
#endif
  return report;
}

}  // namespace sluice
