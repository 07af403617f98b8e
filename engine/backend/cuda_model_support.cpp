#include "engine/backend/cuda_model_support.h"

namespace sluice {

std::string cuda_unsupported_features(const ModelConfig& c) {
  std::string out;
  auto add = [&out](const char* what) { out += (out.empty() ? "" : ", ") + std::string(what); };
  if (c.embedding_scale != 1.0f) add("scaled embeddings");
  if (c.norm_weight_offset != 0.0f) add("1 + w norm weights");
  if (c.qk_norm) add("q/k norms");
  if (c.post_norms) add("post-attention and post-FFN norms");
  if (c.activation != Activation::Silu) add("GeGLU");
  if (c.final_logit_softcap > 0.0f) add("logit soft-capping");
  if (c.rotary_dim > 0) add("partial rotary embeddings");
  for (const LayerConfig& l : c.layers) {
    if (l.rope_theta != c.rope_theta) {
      add("per-layer RoPE bases");
      break;
    }
  }
  return out;
}

}  // namespace sluice
