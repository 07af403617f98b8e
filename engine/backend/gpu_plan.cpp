#include "engine/backend/gpu_plan.h"

#ifdef SLUICE_HAS_CUDA
#include "engine/backend/cuda/cuda_backend.h"
#endif

namespace sluice {

EngineConfig fit_engine_to_backend(Backend& backend, EngineConfig config) {
  config.max_num_batched_tokens = resolve_max_num_batched_tokens(config, backend);
#ifdef SLUICE_HAS_CUDA
  if (auto* cuda = dynamic_cast<CudaBackend*>(&backend)) {
    cuda->reserve_activations(
        CudaStepLimits{.max_num_batched_tokens = config.max_num_batched_tokens,
                       .max_num_seqs = config.max_num_seqs,
                       .max_model_len = config.max_model_len,
                       .block_size = config.block_size});
    if (config.num_kv_blocks == 0 && config.kv_cache_bytes == 0) {
      config.kv_cache_bytes =
          cuda->plan_kv_cache(config.gpu_memory_utilization, config.block_size).kv_cache_bytes;
    }
  }
#else
  (void)backend;
#endif
  return config;
}

}  // namespace sluice
