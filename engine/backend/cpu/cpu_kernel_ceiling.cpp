#include "engine/backend/cpu/cpu_kernel_ceiling.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sluice {

bool parse_cpu_kernel_ceiling(const char* value, CpuKernelCeiling& out) {
  if (!value || !*value || std::strcmp(value, "native") == 0) {
    out = CpuKernelCeiling::kNative;
  } else if (std::strcmp(value, "avx2") == 0) {
    out = CpuKernelCeiling::kAvx2;
  } else if (std::strcmp(value, "portable") == 0) {
    out = CpuKernelCeiling::kPortable;
  } else {
    return false;
  }
  return true;
}

CpuKernelCeiling cpu_kernel_ceiling() {
  static const CpuKernelCeiling ceiling = [] {
    const char* value = std::getenv("SLUICE_CPU_KERNELS");
    CpuKernelCeiling parsed = CpuKernelCeiling::kNative;
    if (!parse_cpu_kernel_ceiling(value, parsed)) {
      std::fprintf(stderr,
                   "SLUICE_CPU_KERNELS=%s is not one of native, avx2, portable: the CPU kernels "
                   "use this CPU's best instruction set\n",
                   value);
    }
    return parsed;
  }();
  return ceiling;
}

}  // namespace sluice
