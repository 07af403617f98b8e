// Building the backend a run asks for by device name, with or without CUDA compiled in.
#pragma once

#include <memory>
#include <string>

#include "engine/backend/backend.h"
#include "engine/model/model.h"

namespace sluice {

// Builds a backend for device "cpu", "cuda", "cuda:N" or "auto" (CUDA when usable, else CPU)
// over model, which must outlive it. num_threads applies to the CPU backend (0 = all cores).
// Throws Error when the device is not available, saying why.
std::unique_ptr<Backend> make_backend(const Model& model, const std::string& device,
                                      int num_threads);

}  // namespace sluice
