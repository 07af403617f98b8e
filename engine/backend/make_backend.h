// Building the backend a run asks for by device name, with or without CUDA compiled in.
#pragma once

#include <memory>
#include <string>

#include "engine/backend/backend.h"
#include "engine/model/model.h"

namespace sluice {

// Builds a backend for device "cpu", "cuda", "cuda:N" or "auto" (CUDA when usable, else CPU)
// over model, which must outlive it. num_threads applies to the CPU backend (0 = all cores);
// kv_cache_dtype Fp8 needs a GPU (the CPU backend keeps its cache in float32). Throws Error when
// the device is not available or cannot hold that cache, saying why. num_cpu_moe_layers: on a GPU,
// the leading layers whose experts stay in host memory and run on the CPU (--n-cpu-moe; ignored
// by the CPU backend and by dense models).
// Throws Error, naming the device, when it is unavailable (resolve_device) or cannot hold a KV
// cache of kv_cache_dtype: the checks make_backend makes, for a run to fail before it loads.
void check_backend_choice(const std::string& device, KvCacheDType kv_cache_dtype);

std::unique_ptr<Backend> make_backend(const Model& model, const std::string& device,
                                      int num_threads,
                                      KvCacheDType kv_cache_dtype = KvCacheDType::Auto,
                                      int num_cpu_moe_layers = 0);

}  // namespace sluice
