// The Gated DeltaNet layer on the CPU (ForwardOps::gated_delta_net; the math is DeltaNetConfig's,
// engine/model/model_config.h), the reference the CUDA kernels are tested against. Every request
// runs its tokens through the convolution and the delta rule in order, one token at a time (the
// recurrent form, for prefill too), so a token's result is bit-for-bit the same however its
// sequence was split into steps and whichever requests share them.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/backend/batch_inputs.h"
#include "engine/backend/cpu/cpu_linear.h"
#include "engine/core/thread_pool.h"
#include "engine/model/model_config.h"

namespace sluice {

// One DeltaNet layer's weights as the CPU backend holds them.
struct CpuDeltaNetWeights {
  const CpuMatrix* qkv = nullptr;    // [conv_dim, hidden]
  const CpuMatrix* z = nullptr;      // [value_dim, hidden]
  const CpuMatrix* beta = nullptr;   // [nv, hidden]
  const CpuMatrix* alpha = nullptr;  // [nv, hidden]
  const CpuMatrix* out = nullptr;    // [hidden, value_dim]
  const float* conv = nullptr;       // [conv_dim, conv_kernel]
  const float* a = nullptr;          // [nv]
  const float* dt = nullptr;         // [nv]
  const float* norm = nullptr;       // [dv]
};

// Where the layer's state of each request lives: slot s's state of this layer starts at
// base + s * slot_stride (DeltaNetConfig::state_floats() floats: conv rows, then the matrices).
struct CpuStateView {
  float* base = nullptr;
  int64_t slot_stride = 0;
};

// Activations of one step, grown to the largest step seen.
struct DeltaNetScratch {
  std::vector<float> qkv, mixed, z, beta, alpha, core;

  size_t bytes() const;
};

// out[num_tokens, hidden] = the DeltaNet layer of x[num_tokens, hidden] (the step's normed rows)
// for the requests of `in`, updating their states (in.state_slots) in place.
void gated_delta_net(const DeltaNetConfig& d, float eps, const CpuDeltaNetWeights& w,
                     const BatchInputs& in, const float* x, CpuStateView state, float* out,
                     ThreadPool& pool, DeltaNetScratch& scratch);

}  // namespace sluice
