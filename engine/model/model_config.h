// The shape and hyper-parameters of a Llama-family decoder, filled from config.json, GGUF
// metadata or a llama2.c header, and validated once (validate()) before any weight is touched.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice {

// How RoPE pairs the dimensions of a head. llama2.c and GGUF store q/k for rotation of
// adjacent pairs (2i, 2i+1); Hugging Face weights are permuted for "rotate half" (i, i + d/2).
enum class RopeLayout : uint8_t { Interleaved, RotateHalf };

// RoPE frequency scaling from config.json "rope_scaling" / GGUF rope.scaling.*.
struct RopeScaling {
  enum class Type : uint8_t { None, Linear, Llama3, LongRope, Yarn };
  Type type = Type::None;
  float factor = 1.0f;
  float low_freq_factor = 1.0f;                 // llama3
  float high_freq_factor = 4.0f;                // llama3
  int original_max_position_embeddings = 8192;  // llama3, longrope
  // LongRoPE (Phi-3/3.5/4): per-pair divisors of the frequencies. The long factors are used when
  // the model's context is longer than original_max_position_embeddings (as llama.cpp decides by
  // the context it runs with), and q.k grows by attention_factor^2 (folded into the attention
  // scale).
  std::vector<float> long_factor, short_factor;
  float attention_factor = 1.0f;
  // YaRN (gpt-oss): pairs that turn fewer than beta_slow times over the original context are
  // interpolated by `factor`, those turning more than beta_fast times kept, the band between
  // ramped; cos and sin grow by attention_factor (1 + 0.1 ln(factor) unless the file says).
  // yarn_truncate rounds the band's ends outwards (llama.cpp always; HF unless truncate: false).
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
  bool yarn_truncate = true;
};

// The activation of the gated feed-forward: silu(gate) * up (SwiGLU), gelu_tanh(gate) * up
// (GeGLU, Gemma), or gpt-oss's clamped SwiGLU: g = min(gate, 7), u = clamp(up, -7, 7),
// g * sigmoid(1.702 g) * (u + 1) (llama.cpp's SWIGLU_OAI; alpha and limit are fixed by the model
// family and stored in no file).
enum class Activation : uint8_t { Silu, GeluTanh, SwigluOai };

// How a mixture-of-experts layer turns its router's logits into the top-k experts and their
// weights. Both pick the k largest logits (ties: the lower expert id first) and list them by
// descending score (llama.cpp's ffn_moe_topk order, in which the experts' outputs are added).
enum class MoeGating : uint8_t {
  // p = softmax over all experts, weights = the chosen p (divided by their sum when
  // moe_renormalize): Qwen3-MoE, Mixtral.
  SoftmaxTopK,
  // weights = softmax over the k chosen logits: gpt-oss (the same function as SoftmaxTopK with
  // renormalisation, rounded as llama.cpp's SOFTMAX_WEIGHT gating rounds it).
  TopKSoftmax,
};

// What a layer mixes its tokens with: attention over the paged KV cache, or a Gated DeltaNet
// (Qwen3.5's linear attention) that keeps a fixed-size recurrent state per sequence instead.
enum class LayerKind : uint8_t { Attention, DeltaNet };

// What differs from layer to layer: Gemma 2 alternates sliding-window and global layers, Gemma 3
// gives its local layers their own RoPE base, a hybrid (Qwen3.5) mixes DeltaNet and attention.
struct LayerConfig {
  LayerKind kind = LayerKind::Attention;
  int sliding_window =
      0;  // a query sees this many most recent positions (itself included); 0 = all
  float rope_theta = 10000.0f;
  RopeScaling rope_scaling;
};

// The Gated DeltaNet layers of a hybrid model (Qwen3.5; HF Qwen3_5GatedDeltaNet, llama.cpp's
// ssm.* keys). Per token: qkv = Normed . Wqkv^T ([q: nk x dk | k: nk x dk | v: nv x dv]), a causal
// depthwise convolution of conv_kernel taps over each channel then SiLU; q and k L2-normalised
// per head, q scaled by 1 / sqrt(dk); beta = sigmoid(Normed . Wbeta^T), g = a * softplus(Normed .
// Walpha^T + dt) per value head; per value head with its key head, the state S [dk, dv]:
// S *= exp(g); S += k (beta (v - S^T k))^T; o = S^T q; then RMSNorm(o) * w * SiLU(z) per value
// head (z = Normed . Wz^T) and the output projection.
struct DeltaNetConfig {
  int num_k_heads = 0;  // 0: the model has no DeltaNet layers
  int num_v_heads = 0;
  int k_head_dim = 0;
  int v_head_dim = 0;
  int conv_kernel = 0;
  // Which key head value head m reads: grouped (Hugging Face files) m / (nv / nk); tiled (GGUF:
  // llama.cpp's converter reorders every value-head tensor) m % nk.
  bool grouped_v_heads = false;

  int key_dim() const { return num_k_heads * k_head_dim; }
  int value_dim() const { return num_v_heads * v_head_dim; }
  int conv_dim() const { return 2 * key_dim() + value_dim(); }
  int key_head_of(int v_head) const {
    return grouped_v_heads ? v_head / (num_v_heads / num_k_heads) : v_head % num_k_heads;
  }
  // One sequence's state of one layer: the last conv_kernel - 1 rows of qkv before the
  // convolution ([conv_kernel - 1, conv_dim]), then a [dk, dv] matrix per value head.
  int64_t conv_state_floats() const { return int64_t{conv_kernel - 1} * conv_dim(); }
  int64_t recurrent_state_floats() const { return int64_t{num_v_heads} * k_head_dim * v_head_dim; }
  int64_t state_floats() const { return conv_state_floats() + recurrent_state_floats(); }
};

// What a file format calls each field, so that validate() names the key the file at hand has
// ("llama.block_count" in a GGUF file, "num_hidden_layers" in config.json).
struct ConfigKeys {
  std::string hidden_size = "hidden_size";
  std::string intermediate_size = "intermediate_size";
  std::string num_layers = "num_hidden_layers";
  std::string num_heads = "num_attention_heads";
  std::string num_kv_heads = "num_key_value_heads";
  std::string head_dim = "head_dim";
  std::string vocab_size = "vocab_size";
  std::string max_position_embeddings = "max_position_embeddings";
  std::string rms_norm_eps = "rms_norm_eps";
  std::string rope_theta = "rope_theta";
  std::string bos_token_id = "bos_token_id";
  std::string eos_token_id = "eos_token_id";
  std::string num_experts = "num_experts";
  std::string num_experts_used = "num_experts_per_tok";
  std::string expert_intermediate_size = "moe_intermediate_size";
};

// The most layers a configuration may declare: far above any published model (hundreds at
// most), and low enough that the per-layer bookkeeping made before the weights are matched to
// the file stays small whatever a damaged header says.
constexpr int kMaxNumLayers = 4096;

// The most experts one token may use (top-k); published models use up to 16.
constexpr int kMaxExpertsPerToken = 64;

struct ModelConfig {
  std::string architecture = "llama";  // an entry of the architecture table (architecture.h)
  int hidden_size = 0;
  int intermediate_size = 0;
  int num_layers = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int vocab_size = 0;
  int max_position_embeddings = 0;  // the context length the model was trained for
  float rms_norm_eps = 1e-5f;
  float rope_theta = 10000.0f;
  RopeLayout rope_layout = RopeLayout::Interleaved;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  bool has_qkv_bias = false;  // Qwen2
  int bos_token_id = -1;
  int eos_token_id = -1;
  std::vector<int> extra_eos_token_ids;  // further ids that end generation (config lists several)
  int sliding_window = 0;                // the window of the windowed layers (layers[l]); 0 = none

  // The options of the model definition (architecture.h fills them per architecture).
  Activation activation = Activation::Silu;
  float norm_weight_offset = 0.0f;   // norms multiply by (offset + w): 1 for Gemma's HF weights
  bool qk_norm = false;              // RMSNorm of each q and k head before RoPE (Qwen3, Gemma 3)
  bool post_norms = false;           // norms of the attention and FFN outputs (Gemma 2/3)
  float embedding_scale = 1.0f;      // token embeddings are multiplied by it (Gemma: sqrt(hidden))
  float attention_scale = 0.0f;      // q.k scale; 0 = 1 / sqrt(head_dim)
  float attn_logit_softcap = 0.0f;   // scores become cap * tanh(score / cap); 0 = off
  float final_logit_softcap = 0.0f;  // the same on the logits
  int rotary_dim = 0;                // dimensions of a head that RoPE rotates; 0 = head_dim
  bool has_output_bias = false;      // a bias on the attention output projection (gpt-oss)
  bool attention_sinks = false;      // one learned extra logit per head in each softmax (gpt-oss)

  // Mixture of experts: 0 experts = every FFN is dense. Otherwise every layer's FFN is a router
  // over num_experts expert FFNs of expert_intermediate_size, num_experts_used of them per token.
  int num_experts = 0;
  int num_experts_used = 0;
  int expert_intermediate_size = 0;
  MoeGating moe_gating = MoeGating::SoftmaxTopK;
  bool moe_renormalize = true;  // SoftmaxTopK: divide the chosen probabilities by their sum
  bool moe_biases = false;      // router and expert biases (gpt-oss)
  // A shared expert beside the routed ones (Qwen3.5-MoE): its SwiGLU FFN of this width, scaled
  // by sigmoid(Normed . w_gate), is added after them; 0 = none.
  int shared_expert_intermediate_size = 0;

  // Hybrid models (Qwen3.5): LayerConfig::kind says which layers are DeltaNet layers.
  DeltaNetConfig deltanet;
  // The attention layers' q projection yields, per head, [q | gate]; the attention output is
  // multiplied by sigmoid(gate) before the output projection (Qwen3.5).
  bool attn_output_gate = false;
  // Per layer, filled by finish_model_config() (architecture.h); empty until then.
  std::vector<LayerConfig> layers;

  bool is_moe() const { return num_experts > 0; }
  // True when some layer is a DeltaNet layer: each sequence then needs a state slot.
  bool is_hybrid() const { return deltanet.num_v_heads > 0; }
  bool is_deltanet_layer(int layer) const {
    return !layers.empty() && layers[static_cast<size_t>(layer)].kind == LayerKind::DeltaNet;
  }
  int num_attention_layers() const;
  int num_deltanet_layers() const { return num_layers - num_attention_layers(); }
  // One sequence's recurrent state over every DeltaNet layer, in floats (0 without any).
  int64_t state_floats() const { return num_deltanet_layers() * deltanet.state_floats(); }
  int q_size() const { return num_heads * head_dim; }
  int rope_dims() const { return rotary_dim > 0 ? rotary_dim : head_dim; }
  float effective_attention_scale() const;
  int kv_size() const { return num_kv_heads * head_dim; }

  // Throws Error naming `source` and the key (as `keys` spells it) when a field is missing,
  // non-positive, past a sane maximum, inconsistent, or a special token id lies outside the
  // vocabulary.
  void validate(const std::string& source, const ConfigKeys& keys = {}) const;

  // One line for logs and the model panel: "llama: 5 layers, hidden 64, 8 heads (4 KV) ...".
  std::string describe() const;
  // The positions the KV cache must keep behind each request's newest query: the widest window
  // when every layer has one (blocks before it can be freed), 0 when some layer sees everything.
  int kv_window() const;
  // ", sliding window 16 on 3 of 4 layers" or "" when no layer has one.
  std::string window_summary() const;

 private:
  void validate_experts(const std::string& source, const ConfigKeys& keys) const;
  void validate_deltanet(const std::string& source) const;
};

}  // namespace sluice
