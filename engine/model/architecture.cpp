#include "engine/model/architecture.h"

#include <cmath>

#include "engine/core/error.h"

namespace sluice {

namespace {

using enum Activation;
using enum WindowPattern;

// Options not named are off (see Architecture); activation SiLU, windows on all layers.
constexpr Architecture kArchitectures[] = {
    {.name = "llama", .hf_type = "llama", .gguf_name = "llama", .gguf_rope_interleaved = true},
    {.name = "mistral", .hf_type = "mistral", .gguf_rope_interleaved = true},
    {.name = "qwen2", .hf_type = "qwen2", .gguf_name = "qwen2"},
    {.name = "qwen3", .hf_type = "qwen3", .gguf_name = "qwen3", .qk_norm = true},
    {.name = "gemma2",
     .hf_type = "gemma2",
     .gguf_name = "gemma2",
     .activation = GeluTanh,
     .post_norms = true,
     .scaled_embedding = true,
     .hf_norm_plus_one = true,
     .window_pattern = EvenLayers,
     .hf_tied_by_default = true},
    {.name = "gemma3",
     .hf_type = "gemma3_text",
     .gguf_name = "gemma3",
     .activation = GeluTanh,
     .qk_norm = true,
     .post_norms = true,
     .scaled_embedding = true,
     .hf_norm_plus_one = true,
     .window_pattern = PeriodGlobal,
     .hf_tied_by_default = true},
    {.name = "qwen3moe", .hf_type = "qwen3_moe", .gguf_name = "qwen3moe", .qk_norm = true},
    // GGUF files of Mixtral are "llama" files with expert tensors (find_gguf_architecture).
    {.name = "mixtral",
     .hf_type = "mixtral",
     .gguf_rope_interleaved = true,
     .hf_moe_block = "block_sparse_moe",
     .hf_experts = HfExperts::W1W3W2},
    {.name = "gpt-oss",
     .hf_type = "gpt_oss",
     .gguf_name = "gpt-oss",
     .activation = SwigluOai,
     .window_pattern = EvenLayers,
     .output_bias = true,
     .attention_sinks = true,
     .moe_gating = MoeGating::TopKSoftmax,
     .moe_biases = true,
     .hf_router = "router",
     .hf_experts = HfExperts::FusedMxfp4,
     .gguf_ffn_norm = "post_attention_norm.weight"},
    // Qwen3.5 (Qwen3-Next's layers): the GGUF files store the norms + 1, ssm_norm as is.
    {.name = "qwen35",
     .hf_type = "qwen3_5_text",
     .gguf_name = "qwen35",
     .qk_norm = true,
     .hf_norm_plus_one = true,
     .gguf_ffn_norm = "post_attention_norm.weight",
     .hybrid = true},
    {.name = "qwen35moe",
     .hf_type = "qwen3_5_moe_text",
     .gguf_name = "qwen35moe",
     .qk_norm = true,
     .hf_norm_plus_one = true,
     .hf_experts = HfExperts::FusedGateUpHalves,
     .gguf_ffn_norm = "post_attention_norm.weight",
     .hybrid = true},
    {.name = "phi3",
     .hf_type = "phi3",
     .gguf_name = "phi3",
     .fused_qkv = true,
     .fused_gate_up = true,
     .window_pattern = Ignored},
};

std::string list_names(bool hf) {
  std::string out;
  for (const auto& a : kArchitectures) {
    const char* n = hf ? a.hf_type : a.gguf_name;
    if (n) out += (out.empty() ? "" : ", ") + std::string(n);
  }
  return out;
}

}  // namespace

const Architecture* find_hf_architecture(std::string_view model_type) {
  for (const auto& a : kArchitectures) {
    if (a.hf_type && model_type == a.hf_type) return &a;
  }
  return nullptr;
}

const Architecture* find_gguf_architecture(std::string_view name) {
  for (const auto& a : kArchitectures) {
    if (a.gguf_name && name == a.gguf_name) return &a;
  }
  return nullptr;
}

const Architecture* find_gguf_architecture(std::string_view name, bool has_experts) {
  if (name == "llama" && has_experts) return find_hf_architecture("mixtral");
  return find_gguf_architecture(name);
}

const Architecture& architecture_of(const ModelConfig& config) {
  for (const auto& a : kArchitectures) {
    if (config.architecture == a.name) return a;
  }
  fail("architecture '", config.architecture, "' is not in Sluice's table");
}

std::string supported_hf_architectures() {
  return list_names(true);
}
std::string supported_gguf_architectures() {
  return list_names(false);
}

void apply_architecture(const Architecture& arch, ModelConfig& c, int period,
                        float local_rope_theta) {
  c.architecture = arch.name;
  c.activation = arch.activation;
  c.qk_norm = arch.qk_norm;
  c.post_norms = arch.post_norms;
  c.has_output_bias = arch.output_bias;
  c.attention_sinks = arch.attention_sinks;
  c.moe_gating = arch.moe_gating;
  c.moe_biases = arch.moe_biases && c.is_moe();
  if (arch.scaled_embedding) c.embedding_scale = std::sqrt(static_cast<float>(c.hidden_size));
  if (arch.window_pattern == Ignored) c.sliding_window = 0;
  // A layer count past the limit is left for validate() to refuse, before anything is sized by it.
  if (c.num_layers <= 0 || c.num_layers > kMaxNumLayers) return;
  c.layers.assign(static_cast<size_t>(c.num_layers), LayerConfig{});
  for (int l = 0; l < c.num_layers; ++l) {
    LayerConfig& layer = c.layers[static_cast<size_t>(l)];
    bool local = false;
    switch (arch.window_pattern) {
      case AllLayers:
        local = true;
        break;
      case EvenLayers:
        local = l % 2 == 0;
        break;
      case PeriodGlobal:
        local = period <= 0 || (l + 1) % period != 0;
        break;
      case Ignored:
        break;
    }
    layer.sliding_window = local ? c.sliding_window : 0;
    const bool local_rope = local && local_rope_theta > 0.0f;
    layer.rope_theta = local_rope ? local_rope_theta : c.rope_theta;
    if (!local_rope) layer.rope_scaling = c.rope_scaling;
  }
}

}  // namespace sluice
