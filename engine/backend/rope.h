// RoPE frequencies, shared by the CPU and CUDA backends so both rotate by the same angles.
#pragma once

#include <vector>

#include "engine/model/model_config.h"
#include "engine/model/model_weights.h"

namespace sluice {

// Returns the inverse frequency of each of the head_dim / 2 rotation pairs in double precision:
// theta^(-2i/d), adjusted by rope scaling (linear, llama3) and GGUF's rope_freqs factors.
std::vector<double> rope_inverse_frequencies(const ModelConfig& config,
                                             const WeightTensor& freq_factors);

}  // namespace sluice
