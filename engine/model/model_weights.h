// The weights of a Llama-family decoder by role. Views into the model's files (see
// WeightTensor); optional tensors (biases, separate output head, RoPE factors) are empty views.
#pragma once

#include <vector>

#include "engine/model/weight_tensor.h"

namespace sluice {

struct LayerWeights {
  WeightTensor attn_norm;  // [hidden_size]
  WeightTensor wq;         // [num_heads * head_dim, hidden_size]
  WeightTensor wk;         // [num_kv_heads * head_dim, hidden_size]
  WeightTensor wv;         // [num_kv_heads * head_dim, hidden_size]
  WeightTensor bq;         // [num_heads * head_dim] (Qwen2) or empty
  WeightTensor bk;         // [num_kv_heads * head_dim] or empty
  WeightTensor bv;         // [num_kv_heads * head_dim] or empty
  WeightTensor wo;         // [hidden_size, num_heads * head_dim]
  WeightTensor ffn_norm;   // [hidden_size]
  WeightTensor w_gate;     // [intermediate_size, hidden_size]
  WeightTensor w_up;       // [intermediate_size, hidden_size]
  WeightTensor w_down;     // [hidden_size, intermediate_size]
};

struct ModelWeights {
  WeightTensor token_embedding;  // [vocab_size, hidden_size]
  std::vector<LayerWeights> layers;
  WeightTensor final_norm;  // [hidden_size]
  WeightTensor lm_head;     // [vocab_size, hidden_size]; the embedding when tied
  WeightTensor
      rope_freq_factors;  // [head_dim / 2] divisors of RoPE frequencies (GGUF llama3) or empty
};

}  // namespace sluice
