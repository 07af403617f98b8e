#include "engine/backend/make_backend.h"

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cuda/cuda_weight_layout.h"
#include "engine/backend/device.h"
#ifdef SLUICE_HAS_CUDA
#include "engine/backend/cuda/cuda_backend.h"
#endif
#include "engine/core/error.h"

namespace sluice {

namespace {

// Resolves device (resolve_device) and checks that it can hold a cache of kv_cache_dtype;
// returns the CUDA device index, or -1 for the CPU.
int resolve_backend_device(const std::string& device, KvCacheDType kv_cache_dtype) {
  const int index = resolve_device(device);
  if (index < 0 && kv_cache_dtype == KvCacheDType::Fp8) {
    fail("device ", device,
         ": an FP8 KV cache needs a CUDA device (--device cuda); the CPU "
         "backend keeps K and V in float32");
  }
  return index;
}

}  // namespace

void check_backend_choice(const std::string& device, KvCacheDType kv_cache_dtype) {
  resolve_backend_device(device, kv_cache_dtype);
}

std::unique_ptr<Backend> make_backend(const Model& model, const std::string& device,
                                      int num_threads, KvCacheDType kv_cache_dtype,
                                      int num_cpu_moe_layers) {
  int index = resolve_backend_device(device, kv_cache_dtype);
  // "auto" runs a model the CUDA backend cannot run yet on the CPU; a named GPU refuses it.
  if (index >= 0 && device == "auto" && !cuda_unsupported_features(model.config).empty() &&
      kv_cache_dtype != KvCacheDType::Fp8) {
    index = -1;
  }
  if (index < 0)
    return std::make_unique<CpuBackend>(model, CpuBackendOptions{.num_threads = num_threads});
#ifdef SLUICE_HAS_CUDA
  return std::make_unique<CudaBackend>(
      model, CudaBackendOptions{.device_index = index,
                                .kv_cache_dtype = kv_cache_dtype,
                                .num_host_expert_layers = num_cpu_moe_layers,
                                .num_host_threads = num_threads});
#else
  (void)num_cpu_moe_layers;  // only a GPU leaves experts in host memory
  fail("device ", device, ": this build has no CUDA backend");  // resolve_device refused it already
#endif
}

}  // namespace sluice
