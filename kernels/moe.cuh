// The device halves of a mixture-of-experts layer (ForwardOps::moe_ffn; the CPU's cpu_moe.h is
// the reference): the router's top-k choice per token, and the sum of each token's weighted
// expert outputs in top-k order, and the expert biases of a grouped product. The expert products
// between them run over the tokens grouped by expert (engine/backend/cuda/cuda_forward.cpp): for
// few rows per expert, every expert in one launch (quant_gemv_int8.cuh's
// quant_gemv_int8_experts), else the ordinary products expert by expert.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/status.h"

namespace sluice::kernels {

// The most experts a layer may have and a token may use on the device (published models: up to
// 256 and 16).
inline constexpr int kMaxMoeExperts = 1024;
inline constexpr int kMaxMoeTopK = 64;

// One expert's rows in a step's rows grouped by expert: rows [first_row, first_row + num_rows).
struct ExpertRows {
  int expert;
  int first_row;
  int num_rows;
};

// y[r, :] += biases[g.expert][:] for the rows r of every group g (y: rows of dim values, fp32
// biases): the expert biases of a grouped product (quant_gemv_int8_experts) in one launch.
template <typename T>
KernelStatus add_expert_biases(T* y, const float* const* biases, const ExpertRows* groups,
                               int num_groups, int dim, cudaStream_t stream);

// How router logits become weights (engine/model/model_config.h's MoeGating).
enum class MoeGatingKind : int {
  SoftmaxTopK = 0,  // p = softmax(all logits); the k largest p, renormalised or not
  TopKSoftmax = 1,  // the k largest logits, then softmax over those k
};

// router_logits: [num_tokens, num_experts] fp32 (overwritten: SoftmaxTopK leaves p there)
// ids:           [num_tokens, top_k] the chosen experts, highest score first, ties to the lower id
// weights:       [num_tokens, top_k] their weights
// Computes exactly as choose_experts (cpu_moe.cpp) rounds: exp in float, the softmax's sum in
// double, one multiplication by its inverse; renormalisation divides by the float sum. One thread
// per token, so a token's choice does not depend on the others. Returns an invalid-argument status
// for counts out of range (num_experts > kMaxMoeExperts, top_k > min(num_experts, kMaxMoeTopK)).
KernelStatus moe_choose_experts(float* router_logits, int32_t* ids, float* weights, int num_tokens,
                                int num_experts, int top_k, MoeGatingKind gating, bool renormalize,
                                cudaStream_t stream);

// out[t, :] = sum over j = 0..top_k-1 of weights[t, j] * expert_out[row_of_slot[t * top_k + j],
// :], added in that order (rank 0 first) in fp32, then rounded to T once.
// expert_out:  [num_rows, hidden] fp32, the experts' outputs in any row order
// row_of_slot: [num_tokens, top_k] the row of expert_out that holds slot (t, j)
// weights:     [num_tokens, top_k]
// out:         [num_tokens, hidden]
template <typename T>
KernelStatus moe_combine(const float* expert_out, const int32_t* row_of_slot, const float* weights,
                         T* out, int num_tokens, int top_k, int hidden, cudaStream_t stream);

}  // namespace sluice::kernels
