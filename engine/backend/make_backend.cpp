#include "engine/backend/make_backend.h"

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/device.h"
#ifdef SLUICE_HAS_CUDA
#include "engine/backend/cuda/cuda_backend.h"
#endif
#include "engine/core/error.h"

namespace sluice {

std::unique_ptr<Backend> make_backend(const Model& model, const std::string& device,
                                      int num_threads) {
  const int index = resolve_device(device);
  if (index < 0)
    return std::make_unique<CpuBackend>(model, CpuBackendOptions{.num_threads = num_threads});
#ifdef SLUICE_HAS_CUDA
  return std::make_unique<CudaBackend>(model, CudaBackendOptions{.device_index = index});
#else
  fail("device ", device, ": this build has no CUDA backend");  // resolve_device refused it already
#endif
}

}  // namespace sluice
