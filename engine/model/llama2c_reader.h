// llama2.c legacy checkpoint (.bin): seven little-endian int32 (dim, hidden_dim, n_layers,
// n_heads, n_kv_heads, vocab_size, seq_len), then fp32 tensors in a fixed order. A negative
// vocab_size means the classifier is stored separately after the (ignored) RoPE tables.
#pragma once

#include <memory>
#include <string>

#include "engine/core/mapped_file.h"
#include "engine/model/model_config.h"
#include "engine/model/tensor_directory.h"

namespace sluice {

struct Llama2cCheckpoint {
  std::shared_ptr<const MappedFile> file;
  ModelConfig config;
  TensorDirectory tensors;  // named with GGUF's names: token_embd.weight, blk.0.attn_q.weight, ...
};

// Maps the file, validates the header against the file size and names every tensor. Throws
// Error naming the file and the field or tensor at fault.
Llama2cCheckpoint read_llama2c(const std::string& path);

// Returns true when the file is plausibly a llama2.c checkpoint (positive header fields whose
// implied size matches the file size).
bool is_llama2c_file(const std::string& path);

}  // namespace sluice
