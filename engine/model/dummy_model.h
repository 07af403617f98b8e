// Models of published shapes with seeded random weights, for benchmarks that need a real
// model's cost without downloading it (`sluice bench --dummy-weights llama-2-7b`). The outputs
// are meaningless; the work per token is that of the real model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/model/model.h"

namespace sluice {

// Returns the names of the shapes make_dummy_model knows.
std::vector<std::string> dummy_model_presets();

// Returns the configuration of a preset; throws Error listing the presets for an unknown name.
ModelConfig dummy_model_config(const std::string& preset);

// Builds the preset with weights drawn uniformly from [-0.035, 0.035] (std 0.02) by a generator
// keyed by seed, stored as dtype (F32, F16 or BF16), norms set to 1. num_layers > 0 keeps only
// that many layers (tests compare backends on one layer of a large shape). Throws Error when
// the memory cannot be had.
std::unique_ptr<Model> make_dummy_model(const std::string& preset, DType dtype = DType::F32,
                                        uint64_t seed = 0, int num_layers = 0);

}  // namespace sluice
