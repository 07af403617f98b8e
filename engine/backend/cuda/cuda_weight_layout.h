// How the CUDA backend lays a model's weights out on the device, with no CUDA in it: CudaWeights
// allocates and places by it, and the model panel plans a GPU run with it on any machine.
//
// - A matrix stored in a GGUF quantized type stays in its blocks: it takes its bytes in the file,
//   and products read the blocks (kernels/quant_linear.cuh). F32, F16 and BF16 matrices are
//   converted to the activation type (cuBLAS multiplies them).
// - q|k|v and gate|up are stacked into one matrix each (one product per stack), and so are a
//   Gated DeltaNet layer's input products (q|k|v, z, b, alpha under SsmQkv) and a shared
//   expert's gate|up (under ShexpGate). A stack is a list
//   of runs: consecutive parts stored in one quantized type share a run of raw blocks, consecutive
//   float parts share a run in the activation type, and parts of different types stay runs of
//   their own (a Q4_K_M file stores v in Q6_K and q, k in Q4_K), each written to its column range
//   of the product.
// - Norm weights, biases (q|k|v's stacked as their product is) and RoPE frequency tables are fp32,
//   as are the DeltaNet's vectors read as they are (SsmConv's taps, SsmA, SsmDt, SsmNorm: no norm
//   offset).
// - Mixture of experts: the router (and a shared expert's, ShexpRouter) is fp32 whatever its stored
// type (its logits pick the experts,
//   and rounding them to bf16 would flip choices against the CPU's); each expert's gate and up are
//   stacked into one gate|up matrix and its down is a matrix of its own, by the rules above (in
//   their blocks when quantized); the experts' biases are fp32, gate|up's stacked. The experts of
//   the first num_host_expert_layers layers stay in host memory (--n-cpu-moe) and take no device
//   bytes.
// Every tensor starts on a 256-byte boundary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/model/model_config.h"
#include "engine/model/model_weights.h"

namespace sluice {

// What the model needs that the CUDA backend does not run yet ("mixture-of-experts layers",
// "attention sinks", ...), or "" when it runs the whole model.
std::string cuda_unsupported_features(const ModelConfig& config);

// A run of a matrix's rows as the device stores them.
struct CudaMatrixRunLayout {
  bool is_quantized = false;  // in the parts' GGUF blocks; else in the activation type
  DType stored =
      DType::F32;  // the parts' type in the file (one quantized type for a quantized run)
  std::vector<const WeightTensor*> parts;
  int64_t rows = 0;
};

// The runs of a stack of matrices of one column count, in row order (a single matrix: one run).
std::vector<CudaMatrixRunLayout> cuda_matrix_runs(std::span<const WeightTensor* const> parts);

// The bytes of a run's device copy, 256-byte aligned. element_bytes: the activation type's.
size_t cuda_run_bytes(const CudaMatrixRunLayout& run, size_t element_bytes);

// The bytes of matrix t on the device, unaligned: its file bytes when quantized, else its elements
// in the activation type (element_bytes each).
size_t cuda_matrix_bytes(const WeightTensor& t, size_t element_bytes);

// The bytes of one row of a run's device copy.
size_t cuda_run_row_bytes(const CudaMatrixRunLayout& run, size_t element_bytes);

// A layer's tensor as the device holds it: one role's tensor, or parts stacked under `role`.
struct CudaPlacement {
  WeightRole role;
  std::vector<const WeightTensor*> parts;
};

// The layer's tensors on the device, in placement order: the fused roles' parts (q|k|v under
// Wqkv, gate|up under GateUp) and the q|k|v biases (under Bq) stacked, every other role the layer
// has alone. Throws Error when only some of a stack's parts are present.
std::vector<CudaPlacement> cuda_layer_placements(const LayerWeights& layer);

// The bytes a placement takes: matrices by their runs (the router in fp32), vectors in fp32.
size_t cuda_placement_bytes(const CudaPlacement& placement, size_t element_bytes);

// The model's distinct RoPE frequency tables in fp32 (as the kernels read them) and which one each
// layer uses: one table unless layers differ in base or scaling (Gemma 3's local layers).
struct CudaRopeTables {
  std::vector<std::vector<float>> tables;
  std::vector<size_t> table_of_layer;  // [num_layers]
};
CudaRopeTables cuda_rope_tables(const ModelConfig& config, const WeightTensor& freq_factors);

// The bytes one layer's expert stacks take on the device: per expert its gate|up and down
// matrices by their runs, and the fp32 biases (0 for a dense layer).
size_t cuda_expert_bytes(const LayerExperts& experts, size_t element_bytes);

// The bytes of the expert stacks of the first num_host_expert_layers layers as the model holds
// them in host memory (their file bytes), which stay there with --n-cpu-moe.
size_t cuda_host_expert_bytes(const ModelWeights& weights, int num_host_expert_layers);

// Every byte the CUDA backend's weights take on the device with activations of element_bytes:
// the embedding (and an untied LM head) by their runs, each layer's placements and, past the
// first num_host_expert_layers layers, its experts, the final norm and the RoPE tables.
size_t cuda_weight_bytes(const ModelWeights& weights, const ModelConfig& config,
                         size_t element_bytes, int num_host_expert_layers = 0);

}  // namespace sluice
