// Fitting an engine to its backend's device, available with or without CUDA compiled in (the
// CUDA side lives in engine/backend/cuda/; this facade is what the app and engine callers use).
//
// On a GPU the KV pool is sized the way vLLM's profile run sizes it: weights first (uploaded
// when the backend was built), then the activations and workspaces of the largest step the
// config allows, then the pool takes what is left of gpu_memory_utilization x device memory
// (see engine/backend/cuda/cuda_memory_plan.h for the arithmetic).
#pragma once

#include <string>

#include "engine/backend/backend.h"
#include "engine/engine.h"

namespace sluice {

// Returns config ready for an Engine over backend. For a CUDA backend: reserves the activations
// of config's largest step, and, unless num_kv_blocks or kv_cache_bytes fixes the pool, sets
// kv_cache_bytes from gpu_memory_utilization. For the CPU backend: config unchanged. Throws Error
// when the device has no room left for a KV cache.
EngineConfig fit_engine_to_backend(Backend& backend, EngineConfig config);

}  // namespace sluice
