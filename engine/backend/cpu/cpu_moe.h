// The mixture-of-experts FFN on the CPU (ForwardOps::moe_ffn): the router's top-k choice per
// token, then the tokens grouped by expert so that each chosen expert's matrices are read once
// per step whatever the number of tokens routed to it, and each token's expert outputs added in
// top-k order. Every product keeps CpuMatrix's fixed per-row order, so a token's result does not
// depend on which other tokens share the step.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engine/backend/cpu/cpu_linear.h"
#include "engine/backend/cpu/cpu_quant_operands.h"
#include "engine/core/thread_pool.h"
#include "engine/model/forward_pass.h"

namespace sluice {

// One layer's router and experts as the CPU backend holds them.
struct CpuExperts {
  CpuMatrix router;                       // [num_experts, hidden]
  std::vector<float> router_bias;         // [num_experts] or empty
  std::vector<CpuMatrix> gate, up, down;  // [expert]: [ffn, hidden], [ffn, hidden], [hidden, ffn]
  // [expert] the biases after each product, or empty.
  std::vector<std::vector<float>> gate_bias, up_bias, down_bias;
};

// The experts each token uses: ids and weights [num_tokens, top_k], rank 0 (the highest score)
// first.
struct ExpertChoice {
  std::vector<int32_t> ids;
  std::vector<float> weights;
};

// Picks each token's top_k experts from its router logits [num_tokens, num_experts] by the
// options' gating: the k largest logits (ties: the lower id first), weighted as MoeGating says.
void choose_experts(const float* router_logits, int64_t num_tokens, const MoeOptions& options,
                    ExpertChoice& choice);

// Called with each layer's choice (ids [num_tokens, top_k]) as the step runs.
using ExpertChoiceObserver = std::function<void(int layer, std::span<const int32_t> ids)>;

// Activations and the choice of one step, grown to the largest step seen.
struct MoeScratch {
  // [slots] rows in expert order: the inputs, act(gate) (up beside it) and the outputs
  std::vector<float> router_logits, gathered, gate, up, expert_out;
  std::vector<int32_t> rows_of_expert;  // (token * top_k + slot) grouped by expert
  std::vector<int32_t> slot_position;   // [token * top_k + slot] its row in expert order
  std::vector<MatrixProduct> products;
  // Quantized experts: the step's rows quantized once, then gathered per expert.
  QuantizedActivations x_quantized;
  std::vector<QuantizedActivations> expert_activations;  // [expert]
  std::vector<int32_t> gather_rows;                      // [slots] the token of each row
  std::vector<QuantProduct> quant_products;
  std::vector<int64_t> expert_begin;  // [num_experts + 1] offsets into rows_of_expert
  ExpertChoice choice;

  size_t bytes() const;
};

// out[num_tokens, hidden] = the layer's mixture-of-experts FFN of x[num_tokens, hidden].
void moe_ffn(const CpuExperts& experts, const MoeOptions& options, const float* x,
             int64_t num_tokens, int64_t hidden, float* out, ThreadPool& pool, MoeScratch& scratch);

}  // namespace sluice
