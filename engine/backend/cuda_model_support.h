// Which options of the model definition the CUDA backend's primitives cover. Built without CUDA
// too, so that device selection can fall back to the CPU for a model the GPU cannot run yet.
#pragma once

#include <string>

#include "engine/model/model_config.h"

namespace sluice {

// The options the CUDA primitives do not have yet, e.g. "q/k norms, GeGLU"; empty when the CUDA
// backend runs the model.
std::string cuda_unsupported_features(const ModelConfig& config);

}  // namespace sluice
