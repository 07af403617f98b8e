// The weights of a decoder by role (weight_roles.h). Views into the model's files (see
// WeightTensor); tensors an architecture does not use (biases, q/k norms, post norms, separate
// output head, RoPE factors) are empty views. Fused tensors of the files are split at load into
// row ranges of the same file data.
#pragma once

#include <vector>

#include "engine/model/weight_roles.h"
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
  WeightTensor q_norm;     // [head_dim] (Qwen3, Gemma 3) or empty
  WeightTensor k_norm;     // [head_dim] or empty
  WeightTensor post_attn_norm;  // [hidden_size] (Gemma 2/3) or empty
  WeightTensor post_ffn_norm;   // [hidden_size] or empty

  // The member holding a per-layer role; nullptr for the fused roles (split at load).
  WeightTensor* slot(WeightRole role);
  const WeightTensor* slot(WeightRole role) const;
};

struct ModelWeights {
  WeightTensor token_embedding;  // [vocab_size, hidden_size]
  std::vector<LayerWeights> layers;
  WeightTensor final_norm;  // [hidden_size]
  WeightTensor lm_head;     // [vocab_size, hidden_size]; the embedding when tied
  WeightTensor
      rope_freq_factors;  // [head_dim / 2] divisors of RoPE frequencies (GGUF llama3) or empty

  // The member holding a model-wide role.
  const WeightTensor* slot(WeightRole role) const;
};

}  // namespace sluice
