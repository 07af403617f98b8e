// Writes a Model as a GGUF v3 file that llama.cpp loads and that Sluice loads back as the same
// model: llama.cpp's metadata keys for the architecture, its tensor names (the weight-role
// table's GGUF names), tensors in their stored types (quantized ones as those GGUF types, norms
// and biases F32) aligned to 32 bytes, and a synthetic SentencePiece vocabulary of the model's
// size. The file is what llama.cpp's converter would make of the model: fused tensors fused
// (Phi-3), llama q/k rows permuted for adjacent-pair RoPE, norms with their offset folded in
// (Gemma's 1 + w), llama3 RoPE scaling as rope_freqs.weight, a mixture of experts' stacks as
// 3-D tensors (ne [cols, rows, num_experts]) with the router F32 and Mixtral as a llama file with
// expert keys. Its purpose is running llama.cpp
// and Sluice on the same weights (`sluice bench --dummy-weights P --save-gguf FILE`).
#pragma once

#include <string>

#include "engine/model/model.h"

namespace sluice {

// Writes model to path, through path.tmp-<pid> renamed into place, so a failed write leaves no
// file behind (and an existing file at path untouched). Throws Error naming the file when it
// cannot be written (a missing folder, a full disk), and naming the option when the model has
// one that a GGUF file cannot carry to llama.cpp (e.g. a sliding window on a Llama, LongRoPE).
void write_gguf_model(const Model& model, const std::string& path);

}  // namespace sluice
