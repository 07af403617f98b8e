// The one weight-role table: every tensor a model definition uses, what kind of tensor it is,
// its name in each file format (per architecture where the families differ), its shape from the
// configuration and when a model's files hold it. The loader reads by it, and backends and tools
// hold a layer's weights in arrays indexed by role (LayerRoleArray), so a new role is a new row
// of the table.
#pragma once

#include <array>
#include <cstddef>
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
  Bo,      // the attention output projection's bias (gpt-oss)
  Sinks,   // [num_heads] one extra attention logit per head (gpt-oss)
  // Mixture of experts: the router and the expert stacks, one slice per expert.
  Router,  // [num_experts, hidden]
  RouterBias,
  GateExps,  // [num_experts, expert_ffn, hidden]
  UpExps,
  DownExps,      // [num_experts, hidden, expert_ffn]
  GateExpsBias,  // [num_experts, expert_ffn]
  UpExpsBias,
  DownExpsBias,  // [num_experts, hidden]
  // A shared expert beside the routed ones (Qwen3.5-MoE).
  ShexpRouter,  // [1, hidden] its gate: the FFN's output is scaled by sigmoid(Normed . w)
  ShexpGate,    // [shared_ffn, hidden]
  ShexpUp,
  ShexpDown,  // [hidden, shared_ffn]
  // A Gated DeltaNet layer (DeltaNetConfig, model_config.h), in place of the attention roles.
  SsmQkv,    // [conv_dim, hidden]: q (nk x dk), k (nk x dk), v (nv x dv)
  SsmZ,      // [nv x dv, hidden] the output gate
  SsmBeta,   // [nv, hidden]
  SsmAlpha,  // [nv, hidden]
  SsmConv,   // [conv_dim, conv_kernel] the causal convolution's taps, oldest first
  SsmA,      // [nv] the decay rate a = -exp(A_log) (negative)
  SsmDt,     // [nv] dt bias added before the softplus
  SsmNorm,   // [dv] the gated RMSNorm's weight, shared by the value heads, used as is
  SsmOut,    // [hidden, nv x dv]
  // Once per model.
  TokenEmbedding,
  FinalNorm,
  LmHead,
};

// The per-layer roles come first in the enum, the model-wide ones after.
inline constexpr size_t kNumLayerWeightRoles = static_cast<size_t>(WeightRole::TokenEmbedding);

// What a role's tensor is, which decides how a backend prepares it.
enum class WeightKind : uint8_t {
  Matrix,          // [out_features, in_features], multiplied (the embedding is read by row)
  Norm,            // an RMSNorm's weight: the norm multiplies by (norm_weight_offset + w)
  Bias,            // added to a product's output, or read as is by its layer (Sinks, the
                   // DeltaNet's SsmConv, SsmA, SsmDt and SsmNorm, never offset)
  ExpertMatrices,  // a stack of one Matrix per expert
  ExpertBiases,    // a stack of one Bias per expert
};

enum class NameScheme : uint8_t { HuggingFace, Gguf };

// Every role, in enum order.
std::span<const WeightRole> all_weight_roles();
inline bool is_layer_role(WeightRole role) {
  return static_cast<size_t>(role) < kNumLayerWeightRoles;
}
WeightKind weight_kind(WeightRole role);
bool is_norm_role(WeightRole role);
inline bool is_expert_role(WeightRole role) {
  const WeightKind kind = weight_kind(role);
  return kind == WeightKind::ExpertMatrices || kind == WeightKind::ExpertBiases;
}
// "attn_q", for messages and describe().
const char* weight_role_name(WeightRole role);

// The roles a fused role of the files holds, in row order (Wqkv: Wq, Wk, Wv; GateUp: Gate, Up);
// empty for every other role.
std::span<const WeightRole> fused_parts(WeightRole role);

// Throws Error: role is not a per-layer role (a model-wide one was asked of a layer).
[[noreturn]] void fail_not_a_layer_role(WeightRole role);

// One T per per-layer role, indexed by the role: a layer's weights as the loader and each
// backend hold them, so that reading a role is a lookup and a new role needs no new member.
template <typename T>
class LayerRoleArray {
 public:
  // The entry of role; throws Error for a model-wide role (never another role's entry).
  T& operator[](WeightRole role) { return items_[index(role)]; }
  const T& operator[](WeightRole role) const { return items_[index(role)]; }

 private:
  static size_t index(WeightRole role) {
    if (!is_layer_role(role)) fail_not_a_layer_role(role);
    return static_cast<size_t>(role);
  }

  std::array<T, kNumLayerWeightRoles> items_{};
};

// The tensor's name in a file of `scheme` ("model.layers.3.self_attn.q_proj.weight",
// "blk.3.attn_q.weight"); layer is ignored for model-wide roles. For an expert role in the
// Hugging Face scheme, `expert` picks the expert's own tensor (...experts.5.gate_proj.weight).
std::string tensor_name(WeightRole role, const Architecture& arch, NameScheme scheme, int layer,
                        int expert = 0);

// The tensor's shape (outermost first) for this configuration; an expert role's is the whole
// stack ([num_experts, ...]), expert_slice_shape() one expert's.
std::vector<int64_t> weight_shape(WeightRole role, const ModelConfig& config);
std::vector<int64_t> expert_slice_shape(WeightRole role, const ModelConfig& config);

// Whether a model of this configuration reads the role from its files (fused roles replace the
// parts they hold; the tied LM head is the embedding). With a layer (>= 0), also whether that
// layer has it: a hybrid's DeltaNet layers have no attention roles, its attention layers no
// DeltaNet roles.
bool weight_role_in_files(WeightRole role, const Architecture& arch, const ModelConfig& config,
                          int layer = -1);

// True for the roles of an attention layer's token mixing (Wq .. Sinks, Wqkv) and of a
// DeltaNet layer's (SsmQkv .. SsmOut).
bool is_attention_role(WeightRole role);
bool is_deltanet_role(WeightRole role);

}  // namespace sluice
