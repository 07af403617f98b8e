// The tiny-arch qwen35 / qwen35moe GGUF files as a Model, read by the tests themselves until the
// engine's loader reads these architectures (issue 34: the lead's engine/model work): the
// configuration from the file's keys (the shapes README.md's "2026 additions" spells out: layer
// i is full attention iff (i + 1) % full_attention_interval == 0, value heads tiled, norms stored
// with their + 1, ssm_norm as is, partial NEOX RoPE), the tensors by their GGUF names. Used only
// when load_model refuses the file (load_hybrid_fixture says which).
#pragma once

#include <memory>
#include <string>

#include "engine/core/error.h"
#include "engine/model/gguf_reader.h"
#include "engine/model/model.h"

namespace sluice::test {

inline std::unique_ptr<Model> read_qwen35_gguf(const std::string& path) {
  const std::unique_ptr<GgufFile> gguf = GgufFile::open(path);
  const std::string arch = gguf->get_string("general.architecture");
  const bool moe = arch == "qwen35moe";
  auto key = [&](const std::string& k) { return gguf->get_int(arch + "." + k); };
  auto model = std::make_unique<Model>();
  model->path = path;
  model->format = ModelFormat::Gguf;
  model->files.push_back(gguf->file());
  ModelConfig& c = model->config;
  c.architecture = arch;
  c.hidden_size = static_cast<int>(key("embedding_length"));
  c.intermediate_size = static_cast<int>(key("feed_forward_length"));
  c.num_layers = static_cast<int>(key("block_count"));
  c.num_heads = static_cast<int>(key("attention.head_count"));
  c.num_kv_heads = static_cast<int>(key("attention.head_count_kv"));
  c.head_dim = static_cast<int>(key("attention.key_length"));
  c.vocab_size = static_cast<int>(gguf->get_string_array("tokenizer.ggml.tokens").size());
  c.max_position_embeddings = static_cast<int>(key("context_length"));
  c.rms_norm_eps = static_cast<float>(gguf->get_float(arch + ".attention.layer_norm_rms_epsilon"));
  c.rope_theta = static_cast<float>(gguf->get_float(arch + ".rope.freq_base"));
  c.rope_layout = RopeLayout::RotateHalf;  // NEOX pairs
  c.rotary_dim = static_cast<int>(key("rope.dimension_count"));
  c.qk_norm = true;
  c.attn_output_gate = true;
  c.bos_token_id = 1;
  c.eos_token_id = 2;
  DeltaNetConfig& d = c.deltanet;
  d.num_k_heads = static_cast<int>(key("ssm.group_count"));
  d.num_v_heads = static_cast<int>(key("ssm.time_step_rank"));
  d.k_head_dim = static_cast<int>(key("ssm.state_size"));
  d.v_head_dim = static_cast<int>(key("ssm.inner_size")) / d.num_v_heads;
  d.conv_kernel = static_cast<int>(key("ssm.conv_kernel"));
  d.grouped_v_heads = false;  // the converter tiles the value heads
  if (moe) {
    c.num_experts = static_cast<int>(key("expert_count"));
    c.num_experts_used = static_cast<int>(key("expert_used_count"));
    c.expert_intermediate_size = static_cast<int>(key("expert_feed_forward_length"));
    c.shared_expert_intermediate_size = static_cast<int>(key("expert_shared_feed_forward_length"));
  }
  const int interval = static_cast<int>(key("full_attention_interval"));
  for (int l = 0; l < c.num_layers; ++l) {
    LayerConfig layer;
    layer.kind = (l + 1) % interval == 0 ? LayerKind::Attention : LayerKind::DeltaNet;
    layer.rope_theta = c.rope_theta;
    c.layers.push_back(layer);
  }

  auto tensor = [&](const std::string& name) {
    const GgufTensorInfo* t = gguf->find_tensor(name);
    if (!t || !t->dtype) fail(path, ": no usable tensor ", name);
    WeightTensor w;
    w.name = t->name;
    w.dtype = *t->dtype;
    w.shape = t->shape;
    w.data = t->data;
    w.num_bytes = t->num_bytes;
    return w;
  };
  ModelWeights& w = model->weights;
  w.token_embedding = tensor("token_embd.weight");
  w.final_norm = tensor("output_norm.weight");
  w.lm_head = tensor("output.weight");
  w.layers.resize(static_cast<size_t>(c.num_layers));
  w.experts.resize(static_cast<size_t>(c.num_layers));
  using enum WeightRole;
  for (int l = 0; l < c.num_layers; ++l) {
    LayerWeights& lw = w.layers[static_cast<size_t>(l)];
    const std::string blk = "blk." + std::to_string(l) + ".";
    auto set = [&](WeightRole role, const std::string& name) { lw[role] = tensor(blk + name); };
    set(AttnNorm, "attn_norm.weight");
    set(FfnNorm, "post_attention_norm.weight");
    if (c.is_deltanet_layer(l)) {
      set(SsmQkv, "attn_qkv.weight");
      set(SsmZ, "attn_gate.weight");
      set(SsmBeta, "ssm_beta.weight");
      set(SsmAlpha, "ssm_alpha.weight");
      set(SsmConv, "ssm_conv1d.weight");
      set(SsmA, "ssm_a");
      set(SsmDt, "ssm_dt.bias");
      set(SsmNorm, "ssm_norm.weight");
      set(SsmOut, "ssm_out.weight");
    } else {
      set(Wq, "attn_q.weight");
      set(Wk, "attn_k.weight");
      set(Wv, "attn_v.weight");
      set(Wo, "attn_output.weight");
      set(QNorm, "attn_q_norm.weight");
      set(KNorm, "attn_k_norm.weight");
    }
    if (!moe) {
      set(Gate, "ffn_gate.weight");
      set(Up, "ffn_up.weight");
      set(Down, "ffn_down.weight");
      continue;
    }
    set(Router, "ffn_gate_inp.weight");
    set(ShexpRouter, "ffn_gate_inp_shexp.weight");
    lw[ShexpRouter].shape = {1, c.hidden_size};
    set(ShexpGate, "ffn_gate_shexp.weight");
    set(ShexpUp, "ffn_up_shexp.weight");
    set(ShexpDown, "ffn_down_shexp.weight");
    LayerExperts& e = w.experts[static_cast<size_t>(l)];
    const std::pair<WeightRole, const char*> stacks[] = {{GateExps, "ffn_gate_exps.weight"},
                                                         {UpExps, "ffn_up_exps.weight"},
                                                         {DownExps, "ffn_down_exps.weight"}};
    for (const auto& [role, name] : stacks) {
      const WeightTensor stack = tensor(blk + name);
      for (int x = 0; x < c.num_experts; ++x) e[role].push_back(expert_slice(stack, x));
    }
  }
  return model;
}

// load_model's Model, or, while it refuses the qwen35 architectures, read_qwen35_gguf's.
inline std::unique_ptr<Model> load_hybrid_fixture(const std::string& path, bool* by_fixture) {
  try {
    auto model = load_model(path);
    *by_fixture = false;
    return model;
  } catch (const Error& e) {
    if (std::string(e.what()).find("is not supported") == std::string::npos) throw;
  }
  *by_fixture = true;
  return read_qwen35_gguf(path);
}

}  // namespace sluice::test
