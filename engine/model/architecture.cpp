#include "engine/model/architecture.h"

#include <cmath>

#include "engine/core/error.h"

namespace sluice {

namespace {

using enum Activation;
using enum WindowPattern;

//                 name       hf_type        gguf      act       qk     post   emb    1+w
//                 fused qkv, gate_up, gguf interleaved, windows
constexpr Architecture kArchitectures[] = {
    {"llama", "llama", "llama", Silu, false, false, false, false, false, false, true, AllLayers},
    {"mistral", "mistral", nullptr, Silu, false, false, false, false, false, false, true,
     AllLayers},
    {"qwen2", "qwen2", "qwen2", Silu, false, false, false, false, false, false, false, AllLayers},
    {"qwen3", "qwen3", "qwen3", Silu, true, false, false, false, false, false, false, AllLayers},
    {"gemma2", "gemma2", "gemma2", GeluTanh, false, true, true, true, false, false, false,
     EvenLayers},
    {"gemma3", "gemma3_text", "gemma3", GeluTanh, true, true, true, true, false, false, false,
     PeriodGlobal},
    {"phi3", "phi3", "phi3", Silu, false, false, false, false, true, true, false, Ignored},
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

const Architecture& architecture_of(const ModelConfig& config) {
  for (const auto& a : kArchitectures) {
    if (config.architecture == a.name) return a;
  }
  fail("architecture '", config.architecture, "' is not in Sluice's table");
}

std::string supported_hf_architectures() { return list_names(true); }
std::string supported_gguf_architectures() { return list_names(false); }

void apply_architecture(const Architecture& arch, ModelConfig& c, int period,
                        float local_rope_theta) {
  c.architecture = arch.name;
  c.activation = arch.activation;
  c.qk_norm = arch.qk_norm;
  c.post_norms = arch.post_norms;
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
