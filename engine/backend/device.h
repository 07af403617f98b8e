// Which compute devices this build can use, available with or without CUDA compiled in.
#pragma once

#include <string>

namespace sluice {

struct DeviceReport {
  bool cuda_compiled = false;  // the build has the CUDA backend
  bool cuda_usable = false;    // at least one device answered
  std::string summary;         // one line for --version and logs
};

// Probes devices once; never throws.
DeviceReport probe_devices();

}  // namespace sluice
