// The model's weights on the device, uploaded once, laid out as cuda_weight_layout.h says:
// matrices (and the embedding table) stored in a GGUF quantized type stay in their blocks (the
// file's bytes; products and the embedding lookup read the blocks), F32/F16/BF16 ones are
// converted on the device to the activation type; norm weights (with the model's offset applied,
// as the CPU backend does: Gemma's 1 + w), biases and RoPE frequencies in fp32, each layer's by
// role. One allocation holds everything; a tied LM head shares the embedding's copy, and layers
// whose RoPE frequencies are equal share one table. q/k/v and gate/up are stacked into one matrix
// each (fewer, larger products: at batch 1 the separate k and v products ran at a third of the
// memory bandwidth on an H200).
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_buffer.h"
#include "engine/model/forward_pass.h"
#include "engine/model/model_config.h"
#include "engine/model/model_weights.h"
#include "kernels/dequantize.cuh"

namespace sluice {

// A run of a matrix's rows on the device in one stored format: GGUF blocks, or the activation
// type (QuantFormat::Dense).
struct CudaMatrixRun {
  const void* data = nullptr;  // [rows] rows of row_bytes
  int rows = 0;
  size_t row_bytes = 0;
  kernels::QuantFormat format = kernels::QuantFormat::Dense;
};

// A matrix on the device: its runs in row order (one, unless a stack's parts differ in type).
struct CudaMatrix {
  int rows = 0;  // out_features, over every run
  int cols = 0;  // in_features
  std::vector<CudaMatrixRun> runs;

  bool empty() const { return runs.empty(); }
  // The matrix as one run in the activation type (what cuBLAS multiplies), or null.
  const void* dense() const {
    return runs.size() == 1 && runs[0].format == kernels::QuantFormat::Dense ? runs[0].data
                                                                             : nullptr;
  }
};

// A mixture-of-experts layer's experts on the device (cuda_weight_layout.h): per expert its gate
// and up stacked ([2 * expert_ffn, hidden]: one product gives gate | up per token, as the dense
// GateUp) and its down ([hidden, expert_ffn]); biases fp32 [2 * expert_ffn] and [hidden], or null.
// Empty for a dense layer and for a layer whose experts stay on the host.
struct CudaExperts {
  std::vector<CudaMatrix> gate_up, down;              // [expert]
  std::vector<const float*> gate_up_bias, down_bias;  // [expert], empty without expert biases

  bool empty() const { return gate_up.empty(); }
};

struct CudaLayerWeights {
  // [role] the layer's matrices; null for the roles the model lacks. q, k and v are stacked
  // under Wqkv, so one product yields a row of q | k | v per token, and gate and up under GateUp
  // (gate | up per token): Wq, Wk, Wv, Gate and Up stay null.
  LayerRoleArray<CudaMatrix> matrices;
  // [role] fp32 vectors: norm weights with the model's offset applied, and biases, the q, k and v
  // biases stacked under Bq as their product is (Bk and Bv stay null); null for the roles the
  // model lacks.
  LayerRoleArray<const float*> vectors;
  // The router of a mixture-of-experts layer ([num_experts, hidden]) is matrices[Router], one
  // dense run in fp32 whatever the activation type; its bias is vectors[RouterBias].
  CudaExperts experts;
  // [rope_dims / 2] this layer's RoPE inverse frequencies (rope.h), shared with every layer
  // whose frequencies are the same.
  const float* rope_inv_freq = nullptr;
};

class CudaWeights {
 public:
  // Uploads every weight on `stream` and waits for it, except the experts of the first
  // num_host_expert_layers layers (they stay in host memory: --n-cpu-moe). Precondition: the
  // target device is current; the weights passed the loader's validation against config. Throws
  // Error when the device memory cannot be had.
  CudaWeights(const ModelWeights& weights, const ModelConfig& config, ActivationDType dtype,
              cudaStream_t stream, int num_host_expert_layers = 0);

  int num_layers() const { return static_cast<int>(layers_.size()); }
  const CudaLayerWeights& layer(int layer_idx) const {
    return layers_[static_cast<size_t>(layer_idx)];
  }
  // The layer's matrix or vector of a role. Throw Error for a role the layer has none of.
  const CudaMatrix& matrix(WeightRef weight) const;
  const float* vector(WeightRef weight) const;
  const CudaMatrix& token_embedding() const { return token_embedding_; }  // [vocab, hidden]
  const CudaMatrix& lm_head() const { return lm_head_; }                  // [vocab, hidden]
  const float* final_norm() const { return final_norm_; }                 // [hidden]
  // The number of distinct RoPE frequency tables uploaded (1 unless layers differ).
  int num_rope_tables() const { return num_rope_tables_; }
  size_t bytes() const { return storage_.bytes(); }
  // What became of the stored types, e.g. "F32 weights converted to bf16; Q4_K weights kept in
  // their blocks; Q6_K weights kept in their blocks; norms and biases fp32".
  const std::string& conversion_summary() const { return conversion_summary_; }

 private:
  class Uploader;

  DeviceBuffer storage_;
  std::vector<CudaLayerWeights> layers_;
  CudaMatrix token_embedding_;
  CudaMatrix lm_head_;
  const float* final_norm_ = nullptr;
  int num_rope_tables_ = 0;
  std::string conversion_summary_;
};

// Returns the bytes of one element of dtype.
inline size_t activation_element_bytes(ActivationDType dtype) {
  return dtype == ActivationDType::F32 ? 4 : 2;
}

}  // namespace sluice
