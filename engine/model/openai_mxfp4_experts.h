// gpt-oss's experts as openai's Hugging Face checkpoints store them: per layer
// mlp.experts.gate_up_proj_{blocks,scales,bias} and mlp.experts.down_proj_{blocks,scales,bias},
// MXFP4 with the gate and up rows interleaved (gate = even rows, up = odd). Blocks are
// [experts, rows, cols / 32, 16] bytes (byte j: value 2j in the low nibble, 2j + 1 in the high),
// scales [experts, rows, cols / 32] E8M0 exponents (value = FP4 E2M1 * 2^(scale - 127)), biases
// BF16 [experts, rows]. They are repacked once at load into GGUF's MXFP4 blocks (the values
// unchanged: one exponent byte, then element j low and j + 16 high), the interleaved rows split
// into the GateExps and UpExps stacks and the biases widened to F32.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "engine/model/model_config.h"
#include "engine/model/model_weights.h"
#include "engine/model/tensor_directory.h"

namespace sluice {

// Fills layer's GateExps, UpExps, DownExps and their biases from the HF tensors of `layer`,
// storing the repacked data in `owned`; records the names it read in `used`. Throws Error
// naming the tensor when one is missing or its shape or type disagrees with the configuration.
void read_openai_mxfp4_experts(const TensorDirectory& tensors, const ModelConfig& config, int layer,
                               LayerExperts& experts, std::set<std::string>& used,
                               std::vector<std::vector<uint8_t>>& owned);

}  // namespace sluice
