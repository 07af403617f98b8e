// The weights of a decoder by role (weight_roles.h). Views into the model's files (see
// WeightTensor); tensors an architecture does not use (biases, q/k norms, post norms, separate
// output head, RoPE factors) are empty views. Fused tensors of the files are split at load into
// row ranges of the same file data.
#pragma once

#include <vector>

#include "engine/model/weight_roles.h"
#include "engine/model/weight_tensor.h"

namespace sluice {

// A layer's tensors by role, shaped as weight_shape() says (Wq: [num_heads * head_dim,
// hidden_size], ...). Empty for the roles the architecture lacks and for the fused roles (Wqkv,
// GateUp), which the loader splits into their parts.
using LayerWeights = LayerRoleArray<WeightTensor>;

// A layer's expert stacks by expert role (GateExps ... DownExpsBias, weight_roles.h): one view per
// expert, shaped as expert_slice_shape() says ([expert_ffn, hidden] for GateExps). They are
// slices of the stacked GGUF tensor or the per-expert tensors of a Hugging Face folder; the
// other roles' entries are empty.
using LayerExperts = LayerRoleArray<std::vector<WeightTensor>>;

struct ModelWeights {
  WeightTensor token_embedding;  // [vocab_size, hidden_size]
  std::vector<LayerWeights> layers;
  std::vector<LayerExperts> experts;  // [layer]; every entry empty in a dense model
  WeightTensor final_norm;            // [hidden_size]
  WeightTensor lm_head;               // [vocab_size, hidden_size]; the embedding when tied
  WeightTensor
      rope_freq_factors;  // [head_dim / 2] divisors of RoPE frequencies (GGUF llama3) or empty
};

}  // namespace sluice
