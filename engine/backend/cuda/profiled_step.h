// ProfiledStep: SLUICE_PROFILE_STEP=N marks the eagerly launched steps of N tokens (the first step
// of each decode shape, and every step that has no graph) with an NVTX range named "sluice_step",
// so that a profiler keeps to one step's kernels: ncu --nvtx --nvtx-include "sluice_step/"
// (scripts/gpu-check.sh profile). Without the variable, or under the kernel emulator, it does
// nothing.
#pragma once

#include <cstdlib>

#if !defined(SLUICE_KERNEL_EMULATOR) && __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define SLUICE_HAS_NVTX 1
#endif

namespace sluice {

class ProfiledStep {
 public:
  explicit ProfiledStep([[maybe_unused]] int num_tokens) {
#ifdef SLUICE_HAS_NVTX
    static const int wanted = [] {
      const char* v = std::getenv("SLUICE_PROFILE_STEP");
      return v ? std::atoi(v) : 0;
    }();
    active_ = wanted > 0 && wanted == num_tokens;
    if (active_) nvtxRangePushA("sluice_step");
#endif
  }
  ~ProfiledStep() {
#ifdef SLUICE_HAS_NVTX
    if (active_) nvtxRangePop();
#endif
  }
  ProfiledStep(const ProfiledStep&) = delete;
  ProfiledStep& operator=(const ProfiledStep&) = delete;

 private:
  [[maybe_unused]] bool active_ = false;
};

}  // namespace sluice
