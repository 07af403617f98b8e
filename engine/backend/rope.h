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

// The same for one layer (its RoPE base and scaling: Gemma 3's local layers differ), over the
// rope_dims() / 2 rotated pairs (partial rotary).
std::vector<double> rope_inverse_frequencies(const ModelConfig& config, int layer,
                                             const WeightTensor& freq_factors);

// The frequencies for a given base and scaling.
std::vector<double> rope_inverse_frequencies(const ModelConfig& config, float theta,
                                             const RopeScaling& scaling,
                                             const WeightTensor& freq_factors);

}  // namespace sluice
