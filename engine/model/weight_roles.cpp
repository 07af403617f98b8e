#include "engine/model/weight_roles.h"

#include "engine/core/error.h"

namespace sluice {

namespace {

using enum WeightRole;
using enum WeightKind;

// A dimension of a role's shape, from the configuration.
enum class Dim : uint8_t {
  None,
  Hidden,
  Q,
  Kv,
  Head,
  Heads,
  Ffn,
  Vocab,
  Qkv,
  TwoFfn,
  Experts,
  ExpertFfn,
  QProj,  // Q, or per head [q | gate] with attn_output_gate
  One,
  SharedFfn,
  ConvDim,
  ConvKernel,
  ValueDim,
  VHeads,
  VHeadDim,
};

// When a model's files hold a role.
enum class InFiles : uint8_t {
  Always,
  SeparateQkv,     // !fused_qkv
  FusedQkv,        // fused_qkv
  SeparateGateUp,  // !fused_gate_up, dense FFN
  FusedGateUp,     // fused_gate_up, dense FFN
  DenseFfn,        // !is_moe()
  Moe,             // is_moe()
  MoeBias,         // moe_biases
  OutputBias,      // has_output_bias
  AttnSinks,       // attention_sinks
  QkvBias,         // has_qkv_bias
  QkNorm,          // qk_norm
  PostNorms,       // post_norms
  UntiedHead,      // !tie_word_embeddings
  SharedExpert,    // shared_expert_intermediate_size > 0
  DeltaNet,        // is_hybrid() (and, per layer, a DeltaNet layer)
};

constexpr WeightRole kQkvParts[] = {Wq, Wk, Wv};
constexpr WeightRole kGateUpParts[] = {Gate, Up};

struct RoleRow {
  WeightRole role;
  WeightKind kind;
  Dim rows;
  Dim cols;  // None: a vector of `rows`
  InFiles in_files;
  const char* name;                        // for messages
  const char* hf;                          // after "model.layers.N." for layer roles
  const char* gguf;                        // after "blk.N." for layer roles
  std::span<const WeightRole> parts = {};  // a fused role's parts, in row order
  // Expert roles: the HF tensor of one expert after "<block>.experts.<e>." (GateUpDownProj,
  // W1W3W2 naming); nullptr for the rest.
  const char* hf_expert = nullptr;
  const char* hf_expert_w = nullptr;
};

using enum Dim;
using enum InFiles;

constexpr RoleRow kRoles[] = {
    {AttnNorm, Norm, Hidden, None, Always, "attn_norm", "input_layernorm.weight",
     "attn_norm.weight"},
    {Wq, Matrix, QProj, Hidden, SeparateQkv, "attn_q", "self_attn.q_proj.weight", "attn_q.weight"},
    {Wk, Matrix, Kv, Hidden, SeparateQkv, "attn_k", "self_attn.k_proj.weight", "attn_k.weight"},
    {Wv, Matrix, Kv, Hidden, SeparateQkv, "attn_v", "self_attn.v_proj.weight", "attn_v.weight"},
    {Bq, Bias, Q, None, QkvBias, "attn_q.bias", "self_attn.q_proj.bias", "attn_q.bias"},
    {Bk, Bias, Kv, None, QkvBias, "attn_k.bias", "self_attn.k_proj.bias", "attn_k.bias"},
    {Bv, Bias, Kv, None, QkvBias, "attn_v.bias", "self_attn.v_proj.bias", "attn_v.bias"},
    // [head_dim], applied to each head.
    {QNorm, Norm, Head, None, QkNorm, "attn_q_norm", "self_attn.q_norm.weight",
     "attn_q_norm.weight"},
    {KNorm, Norm, Head, None, QkNorm, "attn_k_norm", "self_attn.k_norm.weight",
     "attn_k_norm.weight"},
    {Wo, Matrix, Hidden, Q, Always, "attn_output", "self_attn.o_proj.weight", "attn_output.weight"},
    {PostAttnNorm, Norm, Hidden, None, PostNorms, "post_attention_norm",
     "post_attention_layernorm.weight", "post_attention_norm.weight"},
    // Llama-style HF files call the FFN's input norm post_attention_layernorm; the families
    // with post norms call it pre_feedforward_layernorm (tensor_name picks).
    {FfnNorm, Norm, Hidden, None, Always, "ffn_norm", "post_attention_layernorm.weight",
     "ffn_norm.weight"},
    {Gate, Matrix, Ffn, Hidden, SeparateGateUp, "ffn_gate", "mlp.gate_proj.weight",
     "ffn_gate.weight"},
    {Up, Matrix, Ffn, Hidden, SeparateGateUp, "ffn_up", "mlp.up_proj.weight", "ffn_up.weight"},
    {Down, Matrix, Hidden, Ffn, DenseFfn, "ffn_down", "mlp.down_proj.weight", "ffn_down.weight"},
    {PostFfnNorm, Norm, Hidden, None, PostNorms, "post_ffw_norm",
     "post_feedforward_layernorm.weight", "post_ffw_norm.weight"},
    {Wqkv, Matrix, Qkv, Hidden, FusedQkv, "attn_qkv", "self_attn.qkv_proj.weight",
     "attn_qkv.weight", kQkvParts},
    // llama.cpp writes Phi-3's fused [gate; up] as ffn_up with twice the rows.
    {GateUp, Matrix, TwoFfn, Hidden, FusedGateUp, "ffn_gate_up", "mlp.gate_up_proj.weight",
     "ffn_up.weight", kGateUpParts},
    {Bo, Bias, Hidden, None, OutputBias, "attn_output.bias", "self_attn.o_proj.bias",
     "attn_output.bias"},
    {Sinks, Bias, Heads, None, AttnSinks, "attn_sinks", "self_attn.sinks", "attn_sinks.weight"},
    // The HF names of the router and the experts depend on the architecture (tensor_name).
    {Router, Matrix, Experts, Hidden, Moe, "ffn_gate_inp", nullptr, "ffn_gate_inp.weight"},
    {RouterBias, Bias, Experts, None, MoeBias, "ffn_gate_inp.bias", nullptr, "ffn_gate_inp.bias"},
    {GateExps,
     ExpertMatrices,
     ExpertFfn,
     Hidden,
     Moe,
     "ffn_gate_exps",
     nullptr,
     "ffn_gate_exps.weight",
     {},
     "gate_proj.weight",
     "w1.weight"},
    {UpExps,
     ExpertMatrices,
     ExpertFfn,
     Hidden,
     Moe,
     "ffn_up_exps",
     nullptr,
     "ffn_up_exps.weight",
     {},
     "up_proj.weight",
     "w3.weight"},
    {DownExps,
     ExpertMatrices,
     Hidden,
     ExpertFfn,
     Moe,
     "ffn_down_exps",
     nullptr,
     "ffn_down_exps.weight",
     {},
     "down_proj.weight",
     "w2.weight"},
    {GateExpsBias, ExpertBiases, ExpertFfn, None, MoeBias, "ffn_gate_exps.bias", nullptr,
     "ffn_gate_exps.bias"},
    {UpExpsBias, ExpertBiases, ExpertFfn, None, MoeBias, "ffn_up_exps.bias", nullptr,
     "ffn_up_exps.bias"},
    {DownExpsBias, ExpertBiases, Hidden, None, MoeBias, "ffn_down_exps.bias", nullptr,
     "ffn_down_exps.bias"},
    {ShexpRouter, Matrix, One, Hidden, SharedExpert, "ffn_gate_inp_shexp",
     "mlp.shared_expert_gate.weight", "ffn_gate_inp_shexp.weight"},
    {ShexpGate, Matrix, SharedFfn, Hidden, SharedExpert, "ffn_gate_shexp",
     "mlp.shared_expert.gate_proj.weight", "ffn_gate_shexp.weight"},
    {ShexpUp, Matrix, SharedFfn, Hidden, SharedExpert, "ffn_up_shexp",
     "mlp.shared_expert.up_proj.weight", "ffn_up_shexp.weight"},
    {ShexpDown, Matrix, Hidden, SharedFfn, SharedExpert, "ffn_down_shexp",
     "mlp.shared_expert.down_proj.weight", "ffn_down_shexp.weight"},
    {SsmQkv, Matrix, ConvDim, Hidden, DeltaNet, "ssm_qkv", "linear_attn.in_proj_qkv.weight",
     "attn_qkv.weight"},
    {SsmZ, Matrix, ValueDim, Hidden, DeltaNet, "ssm_z", "linear_attn.in_proj_z.weight",
     "attn_gate.weight"},
    {SsmBeta, Matrix, VHeads, Hidden, DeltaNet, "ssm_beta", "linear_attn.in_proj_b.weight",
     "ssm_beta.weight"},
    {SsmAlpha, Matrix, VHeads, Hidden, DeltaNet, "ssm_alpha", "linear_attn.in_proj_a.weight",
     "ssm_alpha.weight"},
    // Hugging Face stores the taps as [conv_dim, 1, conv_kernel] (the loader drops the 1).
    {SsmConv, Bias, ConvDim, ConvKernel, DeltaNet, "ssm_conv1d", "linear_attn.conv1d.weight",
     "ssm_conv1d.weight"},
    // Hugging Face stores A_log; the loader converts it to -exp(A_log) as llama.cpp's converter.
    {SsmA, Bias, VHeads, None, DeltaNet, "ssm_a", "linear_attn.A_log", "ssm_a"},
    {SsmDt, Bias, VHeads, None, DeltaNet, "ssm_dt", "linear_attn.dt_bias", "ssm_dt.bias"},
    {SsmNorm, Bias, VHeadDim, None, DeltaNet, "ssm_norm", "linear_attn.norm.weight",
     "ssm_norm.weight"},
    {SsmOut, Matrix, Hidden, ValueDim, DeltaNet, "ssm_out", "linear_attn.out_proj.weight",
     "ssm_out.weight"},
    {TokenEmbedding, Matrix, Vocab, Hidden, Always, "token_embd", "model.embed_tokens.weight",
     "token_embd.weight"},
    {FinalNorm, Norm, Hidden, None, Always, "output_norm", "model.norm.weight",
     "output_norm.weight"},
    {LmHead, Matrix, Vocab, Hidden, UntiedHead, "output", "lm_head.weight", "output.weight"},
};

constexpr auto kAllRoles = [] {
  std::array<WeightRole, std::size(kRoles)> roles{};
  for (size_t i = 0; i < roles.size(); ++i) roles[i] = kRoles[i].role;
  return roles;
}();

const RoleRow& row_of(WeightRole role) {
  return kRoles[static_cast<size_t>(role)];
}

constexpr bool table_is_in_enum_order() {
  for (size_t i = 0; i < std::size(kRoles); ++i) {
    if (static_cast<size_t>(kRoles[i].role) != i) return false;
  }
  return static_cast<size_t>(kRoles[std::size(kRoles) - 1].role) == std::size(kRoles) - 1;
}
static_assert(table_is_in_enum_order());
static_assert(kRoles[kNumLayerWeightRoles].role == TokenEmbedding);  // layer roles first

int64_t size_of(Dim dim, const ModelConfig& c) {
  switch (dim) {
    case None:
      return 0;
    case Hidden:
      return c.hidden_size;
    case Q:
      return c.q_size();
    case Kv:
      return c.kv_size();
    case Head:
      return c.head_dim;
    case Heads:
      return c.num_heads;
    case Experts:
      return c.num_experts;
    case ExpertFfn:
      return c.expert_intermediate_size;
    case Ffn:
      return c.intermediate_size;
    case Vocab:
      return c.vocab_size;
    case Qkv:
      return c.q_size() + 2 * static_cast<int64_t>(c.kv_size());
    case TwoFfn:
      return 2 * static_cast<int64_t>(c.intermediate_size);
    case QProj:
      return c.q_size() * int64_t{c.attn_output_gate ? 2 : 1};
    case One:
      return 1;
    case SharedFfn:
      return c.shared_expert_intermediate_size;
    case ConvDim:
      return c.deltanet.conv_dim();
    case ConvKernel:
      return c.deltanet.conv_kernel;
    case ValueDim:
      return c.deltanet.value_dim();
    case VHeads:
      return c.deltanet.num_v_heads;
    case VHeadDim:
      return c.deltanet.v_head_dim;
  }
  return 0;
}

}  // namespace

std::span<const WeightRole> all_weight_roles() {
  return kAllRoles;
}

WeightKind weight_kind(WeightRole role) {
  return row_of(role).kind;
}

bool is_norm_role(WeightRole role) {
  return weight_kind(role) == Norm;
}

const char* weight_role_name(WeightRole role) {
  return row_of(role).name;
}

std::span<const WeightRole> fused_parts(WeightRole role) {
  return row_of(role).parts;
}

void fail_not_a_layer_role(WeightRole role) {
  fail("weight ", weight_role_name(role), " is a model-wide role, not one of a layer");
}

std::string tensor_name(WeightRole role, const Architecture& arch, NameScheme scheme, int layer,
                        int expert) {
  const RoleRow& row = row_of(role);
  const bool hf = scheme == NameScheme::HuggingFace;
  std::string suffix = hf ? (row.hf ? row.hf : "") : row.gguf;
  if (hf && role == FfnNorm && arch.post_norms) suffix = "pre_feedforward_layernorm.weight";
  if (!hf && role == FfnNorm) suffix = arch.gguf_ffn_norm;
  if (hf && (role == Router || role == RouterBias)) {
    suffix = str_cat(arch.hf_moe_block, ".", arch.hf_router, role == Router ? ".weight" : ".bias");
  }
  if (hf && is_expert_role(role)) {
    const char* name = arch.hf_experts == HfExperts::W1W3W2 ? row.hf_expert_w : row.hf_expert;
    if (!name) fail("weight ", row.name, " has no per-expert Hugging Face tensor");
    suffix = str_cat(arch.hf_moe_block, ".experts.", expert, ".", name);
  }
  if (!is_layer_role(role)) return suffix;
  return str_cat(hf ? "model.layers." : "blk.", layer, ".", suffix);
}

std::vector<int64_t> expert_slice_shape(WeightRole role, const ModelConfig& c) {
  const RoleRow& row = row_of(role);
  if (row.cols == None) return {size_of(row.rows, c)};
  return {size_of(row.rows, c), size_of(row.cols, c)};
}

std::vector<int64_t> weight_shape(WeightRole role, const ModelConfig& c) {
  std::vector<int64_t> shape = expert_slice_shape(role, c);
  if (is_expert_role(role)) shape.insert(shape.begin(), c.num_experts);
  return shape;
}

bool is_attention_role(WeightRole role) {
  switch (role) {
    case Wq:
    case Wk:
    case Wv:
    case Bq:
    case Bk:
    case Bv:
    case QNorm:
    case KNorm:
    case Wo:
    case Wqkv:
    case Bo:
    case Sinks:
      return true;
    default:
      return false;
  }
}

bool is_deltanet_role(WeightRole role) {
  return row_of(role).in_files == DeltaNet;
}

bool weight_role_in_files(WeightRole role, const Architecture& arch, const ModelConfig& c,
                          int layer) {
  if (layer >= 0 && c.is_hybrid()) {
    const bool deltanet_layer = c.is_deltanet_layer(layer);
    if (deltanet_layer && is_attention_role(role)) return false;
    if (!deltanet_layer && is_deltanet_role(role)) return false;
  }
  switch (row_of(role).in_files) {
    case Always:
      return true;
    case SeparateQkv:
      return !arch.fused_qkv;
    case FusedQkv:
      return arch.fused_qkv;
    case SeparateGateUp:
      return !arch.fused_gate_up && !c.is_moe();
    case FusedGateUp:
      return arch.fused_gate_up && !c.is_moe();
    case DenseFfn:
      return !c.is_moe();
    case Moe:
      return c.is_moe();
    case MoeBias:
      return c.moe_biases;
    case OutputBias:
      return c.has_output_bias;
    case AttnSinks:
      return c.attention_sinks;
    case QkvBias:
      return c.has_qkv_bias;
    case QkNorm:
      return c.qk_norm;
    case PostNorms:
      return c.post_norms;
    case UntiedHead:
      return !c.tie_word_embeddings;
    case SharedExpert:
      return c.shared_expert_intermediate_size > 0;
    case DeltaNet:
      return c.is_hybrid();
  }
  return false;
}

}  // namespace sluice
