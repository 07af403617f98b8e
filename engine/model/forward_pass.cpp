#include "engine/model/forward_pass.h"

namespace sluice {

AttentionOptions attention_options(const ModelConfig& config, int layer) {
  AttentionOptions options;
  options.scale = config.effective_attention_scale();
  options.logit_softcap = config.attn_logit_softcap;
  if (!config.layers.empty())
    options.sliding_window = config.layers[static_cast<size_t>(layer)].sliding_window;
  options.sinks = config.attention_sinks;
  return options;
}

MoeOptions moe_options(const ModelConfig& config) {
  return MoeOptions{.num_experts = config.num_experts,
                    .top_k = config.num_experts_used,
                    .gating = config.moe_gating,
                    .renormalize = config.moe_renormalize,
                    .biases = config.moe_biases,
                    .activation = config.activation,
                    .shared_expert = config.shared_expert_intermediate_size > 0};
}

void run_forward(const ModelConfig& c, ForwardOps& ops) {
  using enum StepBuffer;
  ops.embed(c.embedding_scale);
  ops.norm(Residual, Normed, {WeightRole::AttnNorm, 0});
  for (int l = 0; l < c.num_layers; ++l) {
    if (c.is_deltanet_layer(l)) {
      ops.gated_delta_net(l);
    } else {
      ops.qkv_projection(l);
      if (c.qk_norm) ops.head_norms(l);
      ops.rope(l);
      ops.attention(l, attention_options(c, l));
      if (c.attn_output_gate) ops.attention_output_gate(l);
      ops.linear(Attn, {WeightRole::Wo, l}, Proj);
      if (c.has_output_bias) ops.add_bias(Proj, {WeightRole::Bo, l});
    }
    if (c.post_norms) ops.norm(Proj, Proj, {WeightRole::PostAttnNorm, l});
    ops.add_and_norm(Proj, {WeightRole::FfnNorm, l});
    if (c.is_moe()) {
      ops.moe_ffn(l, moe_options(c));
    } else {
      ops.gated_ffn(l, c.activation);
      ops.linear(Hidden, {WeightRole::Down, l}, Proj);
    }
    if (c.post_norms) ops.norm(Proj, Proj, {WeightRole::PostFfnNorm, l});
    if (l + 1 < c.num_layers) ops.add_and_norm(Proj, {WeightRole::AttnNorm, l + 1});
  }
  ops.logits(Proj, c.final_logit_softcap);
}

}  // namespace sluice
