// The model definition: every architecture Sluice runs is one row of a table that says how its
// files are named and read and which options of the one forward pass (forward_pass.h) it uses.
// A new family is a new row (plus any primitive it needs), not a new decoder.
#pragma once

#include <string>
#include <string_view>

#include "engine/model/model_config.h"

namespace sluice {

// Which layers attend through a sliding window (when the model has one).
enum class WindowPattern : uint8_t {
  AllLayers,     // Mistral: every layer
  EvenLayers,    // Gemma 2: layers 0, 2, 4, ...
  PeriodGlobal,  // Gemma 3: every n-th layer (n = sliding_window_pattern) is global, others local
  Ignored,       // Phi-3: the configs name a window that llama.cpp and Sluice do not apply
};

// How a Hugging Face folder names a mixture-of-experts layer's expert tensors.
enum class HfExperts : uint8_t {
  GateUpDownProj,  // <block>.experts.<e>.{gate,up,down}_proj.weight (Qwen3-MoE)
  W1W3W2,          // <block>.experts.<e>.{w1,w3,w2}.weight = gate, up, down (Mixtral)
  FusedMxfp4,      // mlp.experts.{gate_up,down}_proj_{blocks,scales,bias}: openai's MXFP4 layout
  // mlp.experts.gate_up_proj [E, 2F, H] (gate = the first F rows of each expert, up the last F)
  // and mlp.experts.down_proj [E, H, F] (Qwen3.5-MoE)
  FusedGateUpHalves,
};

struct Architecture {
  const char* name = nullptr;       // ModelConfig::architecture, e.g. "gemma2"
  const char* hf_type = nullptr;    // config.json model_type, or nullptr when only GGUF names it
  const char* gguf_name = nullptr;  // general.architecture, or nullptr when only HF names it
  Activation activation = Activation::Silu;
  bool qk_norm = false;                // per-head RMSNorm of q and k before RoPE
  bool post_norms = false;             // norms of the attention and FFN outputs
  bool scaled_embedding = false;       // embeddings times sqrt(hidden_size)
  bool hf_norm_plus_one = false;       // the HF files store w for a norm that multiplies by 1 + w
  bool fused_qkv = false;              // one [q; k; v] projection in the files, split at load
  bool fused_gate_up = false;          // one [gate; up] projection in the files, split at load
  bool gguf_rope_interleaved = false;  // llama.cpp permutes this family's q/k for pair RoPE
  WindowPattern window_pattern = WindowPattern::AllLayers;
  bool hf_tied_by_default = false;  // tie_word_embeddings when config.json omits it
  bool output_bias = false;         // a bias on the attention output projection
  bool attention_sinks = false;     // a learned extra softmax logit per head
  // Mixture of experts (when the files declare experts): how the router picks, whether the
  // router and experts have biases, and the HF names of the router (before .weight) and experts.
  MoeGating moe_gating = MoeGating::SoftmaxTopK;
  bool moe_biases = false;
  const char* hf_moe_block = "mlp";  // "<block>.gate" is the router, "<block>.experts" the experts
  const char* hf_router = "gate";
  HfExperts hf_experts = HfExperts::GateUpDownProj;
  const char* gguf_ffn_norm = "ffn_norm.weight";  // the FFN's input norm in GGUF files
  // Gated DeltaNet layers among the attention layers (Qwen3.5): DeltaNetConfig, the attention
  // output gate, a shared expert when the files declare one.
  bool hybrid = false;
};

// Returns the row for a config.json model_type or a GGUF general.architecture; nullptr when
// Sluice has none.
const Architecture* find_hf_architecture(std::string_view model_type);
const Architecture* find_gguf_architecture(std::string_view name);
// The row a GGUF file of general.architecture `name` runs as: a "llama" file with experts is
// Mixtral. nullptr when Sluice has none.
const Architecture* find_gguf_architecture(std::string_view name, bool has_experts);
// Returns the row of ModelConfig::architecture. Precondition: the name comes from the table.
const Architecture& architecture_of(const ModelConfig& config);

// "llama, mistral, qwen2, ..." for messages naming what is supported.
std::string supported_hf_architectures();
std::string supported_gguf_architectures();

// Copies the architecture's options into config and fills config.layers: the window of each
// layer by the row's pattern (`period` for PeriodGlobal), the RoPE base of local layers
// (`local_rope_theta`, 0 = the global one). Called by every reader once the keys are read.
void apply_architecture(const Architecture& arch, ModelConfig& config, int period = 0,
                        float local_rope_theta = 0.0f);

}  // namespace sluice
