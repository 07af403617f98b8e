// The one weight-role table: every tensor a model definition uses, its name in each file format
// (per architecture where the families differ) and its shape from the configuration. The loader
// reads by it, and backends and tools refer to weights by role.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/model/architecture.h"
#include "engine/model/model_config.h"

namespace sluice {

enum class WeightRole : uint8_t {
  // In every layer.
  AttnNorm,
  Wq,
  Wk,
  Wv,
  Bq,
  Bk,
  Bv,
  QNorm,  // [head_dim], applied to each head
  KNorm,
  Wo,
  PostAttnNorm,
  FfnNorm,
  Gate,
  Up,
  Down,
  PostFfnNorm,
  Wqkv,    // fused [q; k; v] in the files; split into Wq, Wk, Wv at load
  GateUp,  // fused [gate; up] in the files; split into Gate, Up at load
  // Once per model.
  TokenEmbedding,
  FinalNorm,
  LmHead,
};

enum class NameScheme : uint8_t { HuggingFace, Gguf };

// Every role, in enum order.
std::span<const WeightRole> all_weight_roles();
bool is_layer_role(WeightRole role);
bool is_norm_role(WeightRole role);
// "attn_q", for messages and describe().
const char* weight_role_name(WeightRole role);

// The tensor's name in a file of `scheme` ("model.layers.3.self_attn.q_proj.weight",
// "blk.3.attn_q.weight"); layer is ignored for model-wide roles.
std::string tensor_name(WeightRole role, const Architecture& arch, NameScheme scheme, int layer);

// The tensor's shape (outermost first) for this configuration.
std::vector<int64_t> weight_shape(WeightRole role, const ModelConfig& config);

// Whether a model of this configuration reads the role from its files (fused roles replace the
// parts they hold; the tied LM head is the embedding).
bool weight_role_in_files(WeightRole role, const Architecture& arch, const ModelConfig& config);

}  // namespace sluice
