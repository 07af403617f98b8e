#include "engine/model/weight_roles.h"

#include "engine/core/error.h"

namespace sluice {

namespace {

using enum WeightRole;

struct RoleNames {
  WeightRole role;
  const char* name;  // for messages
  const char* hf;    // after "model.layers.N." for layer roles
  const char* gguf;  // after "blk.N." for layer roles
};

constexpr RoleNames kRoles[] = {
    {AttnNorm, "attn_norm", "input_layernorm.weight", "attn_norm.weight"},
    {Wq, "attn_q", "self_attn.q_proj.weight", "attn_q.weight"},
    {Wk, "attn_k", "self_attn.k_proj.weight", "attn_k.weight"},
    {Wv, "attn_v", "self_attn.v_proj.weight", "attn_v.weight"},
    {Bq, "attn_q.bias", "self_attn.q_proj.bias", "attn_q.bias"},
    {Bk, "attn_k.bias", "self_attn.k_proj.bias", "attn_k.bias"},
    {Bv, "attn_v.bias", "self_attn.v_proj.bias", "attn_v.bias"},
    {QNorm, "attn_q_norm", "self_attn.q_norm.weight", "attn_q_norm.weight"},
    {KNorm, "attn_k_norm", "self_attn.k_norm.weight", "attn_k_norm.weight"},
    {Wo, "attn_output", "self_attn.o_proj.weight", "attn_output.weight"},
    {PostAttnNorm, "post_attention_norm", "post_attention_layernorm.weight",
     "post_attention_norm.weight"},
    // Llama-style HF files call the FFN's input norm post_attention_layernorm; the families
    // with post norms call it pre_feedforward_layernorm (tensor_name picks).
    {FfnNorm, "ffn_norm", "post_attention_layernorm.weight", "ffn_norm.weight"},
    {Gate, "ffn_gate", "mlp.gate_proj.weight", "ffn_gate.weight"},
    {Up, "ffn_up", "mlp.up_proj.weight", "ffn_up.weight"},
    {Down, "ffn_down", "mlp.down_proj.weight", "ffn_down.weight"},
    {PostFfnNorm, "post_ffw_norm", "post_feedforward_layernorm.weight", "post_ffw_norm.weight"},
    {Wqkv, "attn_qkv", "self_attn.qkv_proj.weight", "attn_qkv.weight"},
    // llama.cpp writes Phi-3's fused [gate; up] as ffn_up with twice the rows.
    {GateUp, "ffn_gate_up", "mlp.gate_up_proj.weight", "ffn_up.weight"},
    {TokenEmbedding, "token_embd", "model.embed_tokens.weight", "token_embd.weight"},
    {FinalNorm, "output_norm", "model.norm.weight", "output_norm.weight"},
    {LmHead, "output", "lm_head.weight", "output.weight"},
};

constexpr WeightRole kAllRoles[] = {
    AttnNorm,     Wq,      Wk,   Wv, Bq,   Bk,          Bv,   QNorm,  KNorm,          Wo,
    PostAttnNorm, FfnNorm, Gate, Up, Down, PostFfnNorm, Wqkv, GateUp, TokenEmbedding, FinalNorm,
    LmHead};

const RoleNames& names_of(WeightRole role) {
  return kRoles[static_cast<size_t>(role)];
}

constexpr bool table_is_in_enum_order() {
  for (size_t i = 0; i < std::size(kRoles); ++i) {
    if (static_cast<size_t>(kRoles[i].role) != i) return false;
  }
  return std::size(kRoles) == std::size(kAllRoles);
}
static_assert(table_is_in_enum_order());

}  // namespace

std::span<const WeightRole> all_weight_roles() {
  return kAllRoles;
}

bool is_layer_role(WeightRole role) {
  return role < TokenEmbedding;
}

bool is_norm_role(WeightRole role) {
  return role == AttnNorm || role == QNorm || role == KNorm || role == PostAttnNorm ||
         role == FfnNorm || role == PostFfnNorm || role == FinalNorm;
}

const char* weight_role_name(WeightRole role) {
  return names_of(role).name;
}

std::string tensor_name(WeightRole role, const Architecture& arch, NameScheme scheme, int layer) {
  const RoleNames& n = names_of(role);
  const bool hf = scheme == NameScheme::HuggingFace;
  const char* suffix = hf ? n.hf : n.gguf;
  if (hf && role == FfnNorm && arch.post_norms) suffix = "pre_feedforward_layernorm.weight";
  if (!is_layer_role(role)) return suffix;
  return str_cat(hf ? "model.layers." : "blk.", layer, ".", suffix);
}

std::vector<int64_t> weight_shape(WeightRole role, const ModelConfig& c) {
  const int64_t hidden = c.hidden_size, ffn = c.intermediate_size, q = c.q_size(), kv = c.kv_size(),
                head = c.head_dim;
  switch (role) {
    case AttnNorm:
    case PostAttnNorm:
    case FfnNorm:
    case PostFfnNorm:
    case FinalNorm:
      return {hidden};
    case QNorm:
    case KNorm:
      return {head};
    case Wq:
      return {q, hidden};
    case Wk:
    case Wv:
      return {kv, hidden};
    case Bq:
      return {q};
    case Bk:
    case Bv:
      return {kv};
    case Wo:
      return {hidden, q};
    case Gate:
    case Up:
      return {ffn, hidden};
    case Down:
      return {hidden, ffn};
    case Wqkv:
      return {q + 2 * kv, hidden};
    case GateUp:
      return {2 * ffn, hidden};
    case TokenEmbedding:
    case LmHead:
      return {c.vocab_size, hidden};
  }
  return {};
}

bool weight_role_in_files(WeightRole role, const Architecture& arch, const ModelConfig& c) {
  switch (role) {
    case Wq:
    case Wk:
    case Wv:
      return !arch.fused_qkv;
    case Wqkv:
      return arch.fused_qkv;
    case Gate:
    case Up:
      return !arch.fused_gate_up;
    case GateUp:
      return arch.fused_gate_up;
    case Bq:
    case Bk:
    case Bv:
      return c.has_qkv_bias;
    case QNorm:
    case KNorm:
      return c.qk_norm;
    case PostAttnNorm:
    case PostFfnNorm:
      return c.post_norms;
    case LmHead:
      return !c.tie_word_embeddings;
    default:
      return true;
  }
}

}  // namespace sluice
