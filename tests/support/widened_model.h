// A copy of a model with its matrices dequantized to F32, for GPU tests: the CPU backend
// multiplies quantized weights with 8-bit activations and the device's kernels with float ones,
// so the fair CPU reference for a product on the device is the CPU on the widened weights.
#pragma once

#include <memory>

#include "engine/core/dtype.h"
#include "engine/model/model.h"

namespace sluice::test {

// widen_experts false keeps a mixture of experts' expert stacks as stored (experts the CUDA
// backend leaves to the CPU run the CPU's own code on them).
inline std::unique_ptr<Model> widened_to_f32(const Model& model, bool widen_experts = true) {
  auto out = std::make_unique<Model>();
  out->path = model.path;
  out->format = model.format;
  out->config = model.config;
  out->weights = model.weights;
  auto widen = [&out](WeightTensor& t) {
    if (t.empty() || t.dtype == DType::F32) return;
    auto& storage = out->owned_storage.emplace_back(static_cast<size_t>(t.num_elements()) * 4);
    dequantize_row(t.dtype, t.data, reinterpret_cast<float*>(storage.data()), t.num_elements());
    t.dtype = DType::F32;
    t.data = storage.data();
    t.num_bytes = storage.size();
  };
  const bool tied = out->weights.lm_head.data == out->weights.token_embedding.data;
  widen(out->weights.token_embedding);
  if (tied) {
    out->weights.lm_head = out->weights.token_embedding;
  } else {
    widen(out->weights.lm_head);
  }
  for (size_t l = 0; l < out->weights.layers.size(); ++l) {
    for (const WeightRole role : all_weight_roles()) {
      if (!is_layer_role(role)) continue;
      if (weight_kind(role) == WeightKind::Matrix) widen(out->weights.layers[l][role]);
      if (widen_experts && weight_kind(role) == WeightKind::ExpertMatrices &&
          l < out->weights.experts.size()) {
        for (WeightTensor& t : out->weights.experts[l][role]) widen(t);
      }
    }
  }
  return out;
}

}  // namespace sluice::test
