// The forward pass of every architecture, written once over a small set of backend primitives
// (ForwardOps). A backend implements the primitives on its own buffers and kernels; which of them
// run, and with which options, comes from the model definition (ModelConfig, architecture.h):
//
//   x = embed(tokens) * embedding_scale
//   per layer: h = norm(x) -> q, k, v (+ bias) -> q/k head norms -> RoPE -> attention (window,
//              scale, soft-cap) -> o projection [-> post-attention norm] -> x += o -> h = norm(x)
//              -> act(gate) * up -> down projection [-> post-FFN norm] -> x += down
//              (mixture of experts: the FFN is the sum of the token's top-k experts' FFNs, each
//              weighted by the router, added in top-k order)
//              (a hybrid's DeltaNet layers replace q .. o projection by gated_delta_net, which
//              keeps each sequence's recurrent state; its attention layers may gate their
//              output by sigmoid(gate) from the doubled q projection; a shared expert adds
//              sigmoid(router) * its SwiGLU FFN after the routed experts)
//   logits = head(norm(x)) [-> soft-cap], for the rows that sample
#pragma once

#include <cstdint>

#include "engine/model/model_config.h"
#include "engine/model/weight_roles.h"

namespace sluice {

// The step's activation buffers, one row per token of the step; a backend sizes and places them.
enum class StepBuffer : uint8_t {
  Residual,  // [tokens, hidden] the residual stream
  Normed,    // [tokens, hidden] the normed input of a projection
  Q,         // [tokens, num_heads * head_dim]
  K,         // [tokens, num_kv_heads * head_dim]
  V,         // [tokens, num_kv_heads * head_dim]
  Attn,      // [tokens, num_heads * head_dim] the attention output
  Proj,      // [tokens, hidden] a projection waiting for its residual add
  Hidden,    // [tokens, intermediate] act(gate) * up
};

struct WeightRef {
  WeightRole role;
  int layer = 0;  // ignored for model-wide roles
};

// What attention does in one layer.
struct AttentionOptions {
  float scale = 0.0f;          // multiplies q . k; > 0 (usually 1 / sqrt(head_dim))
  float logit_softcap = 0.0f;  // > 0: score = cap * tanh(score / cap) before the softmax
  // > 0: a query at position p sees positions p - sliding_window + 1 .. p (the window most
  // recent ones, itself included; llama.cpp and HF mask p - j >= window); 0: all of 0 .. p.
  int sliding_window = 0;
  // The layer's Sinks weights join each head's softmax as one more logit (after scaling and
  // masking) that has no value: p_j = exp(s_j) / (sum_i exp(s_i) + exp(sink)) (gpt-oss).
  bool sinks = false;
};

// What a mixture-of-experts FFN does in one layer (ModelConfig's expert options).
struct MoeOptions {
  int num_experts = 0;
  int top_k = 0;
  MoeGating gating = MoeGating::SoftmaxTopK;
  bool renormalize = true;
  bool biases = false;  // RouterBias and the experts' biases
  Activation activation = Activation::Silu;
  // Then Proj += sigmoid(Normed . ShexpRouter^T) * (silu(Normed . ShexpGate^T) * (Normed .
  // ShexpUp^T)) . ShexpDown^T (Qwen3.5-MoE), added after the routed experts.
  bool shared_expert = false;
};

class ForwardOps {
 public:
  virtual ~ForwardOps() = default;

  // Residual = the step's token embeddings times scale.
  virtual void embed(float scale) = 0;
  // out = RMSNorm(x) * weight, row by row (x and out may be the same buffer). The weight is the
  // model's norm weight with its offset applied (Gemma's 1 + w).
  virtual void norm(StepBuffer x, StepBuffer out, WeightRef weight) = 0;
  // Residual += pending; Normed = RMSNorm(Residual) * weight.
  virtual void add_and_norm(StepBuffer pending, WeightRef weight) = 0;
  // Q, K, V = Normed . (Wq, Wk, Wv)^T, plus the biases when the layer has them. With
  // ModelConfig::attn_output_gate, Wq's rows are per head [q (head_dim) | gate (head_dim)]: Q
  // gets the q halves, and the backend keeps the gate halves for attention_output_gate.
  virtual void qkv_projection(int layer) = 0;
  // Attn *= sigmoid(gate), element by element (the gate qkv_projection kept).
  virtual void attention_output_gate(int layer) = 0;
  // Proj = the Gated DeltaNet layer over Normed (DeltaNetConfig, model_config.h): projections,
  // causal convolution, the delta rule over each request's tokens in order, the gated norm and
  // the output projection. Reads and updates each request's state in its state slot
  // (BatchInputs::state_slots); a request whose step starts at position 0 starts from zeros. A
  // token's result does not depend on the other requests of the step or on how its sequence
  // was split into steps.
  virtual void gated_delta_net(int layer) = 0;
  // RMSNorm of each head_dim-wide head of Q (QNorm) and K (KNorm), in place.
  virtual void head_norms(int layer) = 0;
  // Rotates Q and K by each token's position with the layer's frequencies.
  virtual void rope(int layer) = 0;
  // Writes K and V into the layer's KV cache; Attn = attention of Q over each request's context.
  virtual void attention(int layer, const AttentionOptions& options) = 0;
  // out = x . W^T.
  virtual void linear(StepBuffer x, WeightRef weight, StepBuffer out) = 0;
  // x += the layer's bias of a role, on every row.
  virtual void add_bias(StepBuffer x, WeightRef bias) = 0;
  // Hidden = act(Normed . Wgate^T) * (Normed . Wup^T).
  virtual void gated_ffn(int layer, Activation activation) = 0;
  // Proj = the mixture-of-experts FFN of Normed: per token, the router's logits Normed . Wr^T
  // (+ RouterBias) choose top_k experts and their weights by options.gating, and Proj is
  // sum over the chosen experts, in top-k order (rank 0 first, added left to right in fp32),
  // of weight * (act(Normed . Wgate_e^T) * (Normed . Wup_e^T)) . Wdown_e^T (with the experts'
  // biases after each product when options.biases). A token's result does not depend on which
  // other tokens share the step.
  virtual void moe_ffn(int layer, const MoeOptions& options) = 0;
  // For the rows that need logits: head(RMSNorm(Residual + pending) * final norm), soft-capped.
  virtual void logits(StepBuffer pending, float softcap) = 0;
};

// Runs the whole forward pass of `config` over ops.
void run_forward(const ModelConfig& config, ForwardOps& ops);

// The attention options of a layer.
AttentionOptions attention_options(const ModelConfig& config, int layer);

// The mixture-of-experts options of the model.
MoeOptions moe_options(const ModelConfig& config);

}  // namespace sluice
