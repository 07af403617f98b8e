#include "engine/backend/device.h"

#include <algorithm>

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
      option.total_memory_bytes = d.total_memory_bytes;
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

int parse_cuda_device(const std::string& device) {
  if (device == "cuda") return 0;
  const std::string digits = device.starts_with("cuda:") ? device.substr(5) : "";
  if (digits.empty() || digits.size() > 4 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    fail("unknown device '", device, "' (use cpu, cuda, cuda:N or auto)");
  }
  return std::stoi(digits);
}

int resolve_device(const std::string& device) {
  if (device == "cpu") return -1;
  const int index = device == "auto" ? 0 : parse_cuda_device(device);
#ifdef SLUICE_HAS_CUDA
  // "auto" falls back to the CPU only when there is no GPU; a GPU that fails to take the model
  // (out of memory, no cuBLAS) is an error to report, not a reason to run 100x slower.
  std::string why;
  const int num_devices = count_cuda_devices(why);
  if (num_devices == 0) {
    if (device == "auto") return -1;
    fail("device ", device, ": ", why, "; use --device cpu");
  }
  if (index >= num_devices)
    fail("device ", device, ": there are ", num_devices, " CUDA devices (cuda:0 to cuda:", num_devices - 1, ")");
  return index;
#else
  (void)index;  // the text was checked; there is no device to index
  if (device == "auto") return -1;
  fail("device ", device, ": this build has no CUDA backend (built with SLUICE_CUDA=OFF); use --device cpu");
#endif
}

}  // namespace sluice
