// Models of published shapes with seeded random weights, for benchmarks that need a real
// model's cost without downloading it (`sluice bench --dummy-weights llama-3-8b`). The outputs
// are meaningless; the work per token is that of the real model. A preset carries the model's
// architecture and options (head_dim, q/k norms, post norms, soft-caps, windows, RoPE), so its
// weights cover every role the architecture uses and it can be saved as a GGUF file
// (gguf_writer.h) that llama.cpp runs on the same weights.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/model/model.h"

namespace sluice {

// Returns the names of the published shapes make_dummy_model knows. Small test shapes of each
// architecture ("tiny-llama", "tiny-gemma3", ...) are accepted too but not listed.
std::vector<std::string> dummy_model_presets();

// Returns the configuration of a preset (per-layer options filled); num_layers > 0 keeps only
// that many layers. Throws Error listing the presets for an unknown name.
ModelConfig dummy_model_config(const std::string& preset, int num_layers = 0);

// Returns the bytes the weights of a model of this configuration take with its matrices and
// expert stacks stored as dtype (norms, biases, sinks and the MoE router are F32), every expert
// and the quantized block sizes included.
size_t dummy_model_weight_bytes(const ModelConfig& config, DType dtype);

// Builds the preset with random weights from a generator keyed by seed: float matrices drawn
// uniformly from [-0.035, 0.035] (std 0.02) and stored as dtype; quantized matrices as random
// but valid blocks of that GGUF type whose fp16 scales give the same spread; biases F32 from the
// same range; norms F32 set to 1; a mixture of experts' router F32 and each expert role one
// stack [num_experts, ...] per layer, viewed per expert in ModelWeights::experts. num_layers > 0
// keeps only that many layers (tests compare backends on one layer of a large shape; an 8-layer
// qwen3-30b-a3b is a file of a few GiB). Throws Error naming the tensor when dtype's blocks do
// not fit its rows, and when the memory cannot be had.
std::unique_ptr<Model> make_dummy_model(const std::string& preset, DType dtype = DType::F32,
                                        uint64_t seed = 0, int num_layers = 0);

}  // namespace sluice
