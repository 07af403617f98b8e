#include "engine/backend/cuda_model_support.h"

namespace sluice {

// Every option of the model definition (model_config.h) has its CUDA primitive: scaled
// embeddings, 1 + w norm weights, q/k head norms, post norms, GeGLU, attention and final logit
// soft-caps, sliding windows, partial rotary and per-layer RoPE frequencies (LongRoPE included).
// An option added to the model definition before its kernel lands is named here, e.g.
// "if (c.new_option) add(\"new option\");", so that the CUDA backend refuses the model by name and
// device "auto" falls back to the CPU.
std::string cuda_unsupported_features(const ModelConfig&) {
  return {};
}

}  // namespace sluice
