#include "engine/backend/cuda/cuda_weight_layout.h"

#include <algorithm>
#include <utility>

#include "engine/backend/rope.h"
#include "engine/core/dtype.h"
#include "engine/core/error.h"

namespace sluice {

// Every option of the model definition runs on the CUDA backend (mixtures of experts, attention
// sinks, the output bias and the clamped SwiGLU since issue 30); the next one it lacks is named
// here.
std::string cuda_unsupported_features(const ModelConfig& c) {
  // kernels/moe.cuh's kMaxMoeExperts (this file has no CUDA in it).
  constexpr int kMaxDeviceExperts = 1024;
  // kernels/gated_delta_net.cuh's kMaxDeltaNetConvKernel, and the key head its 48 KiB of shared
  // memory hold (dk x 34 floats).
  constexpr int kMaxDeltaNetConvKernel = 8;
  constexpr int kMaxDeltaNetKeyHeadDim = 352;
  if (c.is_hybrid() && c.deltanet.conv_kernel > kMaxDeltaNetConvKernel)
    return str_cat("a Gated DeltaNet convolution of ", c.deltanet.conv_kernel,
                   " taps (the device's takes ", kMaxDeltaNetConvKernel, ")");
  if (c.is_hybrid() && c.deltanet.k_head_dim > kMaxDeltaNetKeyHeadDim)
    return str_cat("Gated DeltaNet key heads of ", c.deltanet.k_head_dim,
                   " (the device's delta rule takes ", kMaxDeltaNetKeyHeadDim, ")");
  if (c.num_experts > kMaxDeviceExperts)
    return str_cat(c.num_experts, " experts a layer (the device's top-k takes ", kMaxDeviceExperts,
                   ")");
  return "";
}

namespace {

constexpr size_t align_256(size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

// The biases of the stacked q|k|v product, stacked the same way (under Bq).
constexpr WeightRole kQkvBiases[] = {WeightRole::Bq, WeightRole::Bk, WeightRole::Bv};
// A DeltaNet layer's input products, one product per token (under SsmQkv): q|k|v, z, b, alpha.
constexpr WeightRole kDeltaNetInputs[] = {WeightRole::SsmQkv, WeightRole::SsmZ, WeightRole::SsmBeta,
                                          WeightRole::SsmAlpha};
// The shared expert's gate and up (under ShexpGate), as a dense FFN's GateUp.
constexpr WeightRole kSharedGateUp[] = {WeightRole::ShexpGate, WeightRole::ShexpUp};

// Matrices uploaded in fp32 whatever the activation type: the routers.
bool is_fp32_matrix(WeightRole role) {
  return role == WeightRole::Router || role == WeightRole::ShexpRouter;
}

}  // namespace

std::vector<CudaMatrixRunLayout> cuda_matrix_runs(std::span<const WeightTensor* const> parts) {
  std::vector<CudaMatrixRunLayout> runs;
  for (const WeightTensor* t : parts) {
    const bool is_quantized = dtype_traits(t->dtype).quantized;
    const bool joins = !runs.empty() && runs.back().is_quantized == is_quantized &&
                       (!is_quantized || runs.back().stored == t->dtype);
    if (!joins) runs.push_back({is_quantized, t->dtype, {}, 0});
    runs.back().parts.push_back(t);
    runs.back().rows += t->rows();
  }
  return runs;
}

size_t cuda_matrix_bytes(const WeightTensor& t, size_t element_bytes) {
  return dtype_traits(t.dtype).quantized ? t.num_bytes
                                         : static_cast<size_t>(t.num_elements()) * element_bytes;
}

size_t cuda_run_row_bytes(const CudaMatrixRunLayout& run, size_t element_bytes) {
  const int64_t cols = run.parts.front()->cols();
  return run.is_quantized ? dtype_num_bytes(run.stored, cols)
                          : static_cast<size_t>(cols) * element_bytes;
}

size_t cuda_run_bytes(const CudaMatrixRunLayout& run, size_t element_bytes) {
  return align_256(static_cast<size_t>(run.rows) * cuda_run_row_bytes(run, element_bytes));
}

std::vector<CudaPlacement> cuda_layer_placements(const LayerWeights& l) {
  std::vector<CudaPlacement> out;
  LayerRoleArray<bool> is_stacked;
  const std::pair<WeightRole, std::span<const WeightRole>> stacks[] = {
      {WeightRole::Wqkv, fused_parts(WeightRole::Wqkv)},
      {WeightRole::GateUp, fused_parts(WeightRole::GateUp)},
      {WeightRole::Bq, kQkvBiases},
      {WeightRole::SsmQkv, kDeltaNetInputs},
      {WeightRole::ShexpGate, kSharedGateUp}};
  for (const auto& [role, parts] : stacks) {
    CudaPlacement stack{role, {}};
    for (const WeightRole part : parts) {
      is_stacked[part] = true;
      if (!l[part].empty()) stack.parts.push_back(&l[part]);
    }
    if (stack.parts.empty()) continue;
    if (stack.parts.size() != parts.size())
      fail("weight ", stack.parts[0]->name, ": only some of the parts stacked with it are present");
    out.push_back(std::move(stack));
  }
  for (const WeightRole role : all_weight_roles()) {
    if (is_layer_role(role) && !is_stacked[role] && !l[role].empty())
      out.push_back({role, {&l[role]}});
  }
  return out;
}

size_t cuda_placement_bytes(const CudaPlacement& p, size_t element_bytes) {
  if (is_fp32_matrix(p.role))
    return align_256(static_cast<size_t>(p.parts[0]->num_elements()) * sizeof(float));
  if (weight_kind(p.role) == WeightKind::Matrix) {
    size_t bytes = 0;
    for (const CudaMatrixRunLayout& run : cuda_matrix_runs(p.parts))
      bytes += cuda_run_bytes(run, element_bytes);
    return bytes;
  }
  size_t elements = 0;
  for (const WeightTensor* t : p.parts) elements += static_cast<size_t>(t->num_elements());
  return align_256(elements * sizeof(float));
}

CudaRopeTables cuda_rope_tables(const ModelConfig& config, const WeightTensor& freq_factors) {
  CudaRopeTables out;
  for (int l = 0; l < config.num_layers; ++l) {
    const std::vector<double> wide = rope_inverse_frequencies(config, l, freq_factors);
    const std::vector<float> table(wide.begin(), wide.end());
    const auto it = std::find(out.tables.begin(), out.tables.end(), table);
    out.table_of_layer.push_back(static_cast<size_t>(it - out.tables.begin()));
    if (it == out.tables.end()) out.tables.push_back(table);
  }
  return out;
}

size_t cuda_expert_bytes(const LayerExperts& e, size_t element_bytes) {
  using enum WeightRole;
  size_t total = 0;
  for (size_t x = 0; x < e[GateExps].size(); ++x) {
    const WeightTensor* gate_up[] = {&e[GateExps][x], &e[UpExps][x]};
    const WeightTensor* down[] = {&e[DownExps][x]};
    for (const auto parts : {std::span<const WeightTensor* const>(gate_up),
                             std::span<const WeightTensor* const>(down)}) {
      for (const CudaMatrixRunLayout& run : cuda_matrix_runs(parts))
        total += cuda_run_bytes(run, element_bytes);
    }
    if (x < e[GateExpsBias].size()) {
      total += align_256(
          static_cast<size_t>(e[GateExpsBias][x].num_elements() + e[UpExpsBias][x].num_elements()) *
          sizeof(float));
      total += align_256(static_cast<size_t>(e[DownExpsBias][x].num_elements()) * sizeof(float));
    }
  }
  return total;
}

size_t cuda_host_expert_bytes(const ModelWeights& w, int num_host_expert_layers) {
  size_t total = 0;
  for (size_t l = 0; l < w.experts.size() && static_cast<int>(l) < num_host_expert_layers; ++l) {
    for (const WeightRole role : all_weight_roles()) {
      if (!is_layer_role(role)) continue;
      for (const WeightTensor& t : w.experts[l][role]) total += t.num_bytes;
    }
  }
  return total;
}

size_t cuda_weight_bytes(const ModelWeights& w, const ModelConfig& config, size_t element_bytes,
                         int num_host_expert_layers) {
  const auto matrix_bytes = [&](const WeightTensor& t) {
    const WeightTensor* parts[] = {&t};
    return cuda_run_bytes(cuda_matrix_runs(parts).front(), element_bytes);
  };
  const auto floats_bytes = [](int64_t n) { return align_256(static_cast<size_t>(n) * 4); };
  const bool is_tied = w.lm_head.data == w.token_embedding.data;
  size_t total = matrix_bytes(w.token_embedding) + (is_tied ? 0 : matrix_bytes(w.lm_head));
  for (const LayerWeights& l : w.layers) {
    for (const CudaPlacement& p : cuda_layer_placements(l))
      total += cuda_placement_bytes(p, element_bytes);
  }
  for (size_t l = 0; l < w.experts.size(); ++l) {
    if (static_cast<int>(l) >= num_host_expert_layers)
      total += cuda_expert_bytes(w.experts[l], element_bytes);
  }
  total += floats_bytes(config.hidden_size) +
           cuda_rope_tables(config, w.rope_freq_factors).tables.size() *
               floats_bytes(config.rope_dims() / 2);
  return total;
}

}  // namespace sluice
