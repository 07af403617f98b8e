// RMSNorm fused with the residual add that precedes it in a Llama block:
//   residual_out = x + residual_in          (skipped when residual_in is null: residual_out = x)
//   out          = residual_out / sqrt(mean(residual_out^2) + eps) * weight
// With residual_in and residual_out both null it is a plain RMSNorm: out = RMSNorm(x) * weight
// (out may be x: Gemma's post-attention and post-FFN norms run in place).
#pragma once

#include <cuda_runtime.h>

#include "kernels/quant_gemv_int8.cuh"
#include "kernels/status.h"

namespace sluice::kernels {

// x, residual_in, residual_out, out: [num_tokens, hidden_size]; weight: [hidden_size] (float).
// residual_in may be null; residual_out may be null when residual_in is (a plain norm of x);
// residual_out and out may alias x; out must not alias residual_out.
template <typename T>
KernelStatus rms_norm_residual(const T* x, const T* residual_in, T* residual_out,
                               const float* weight, float eps, T* out, int num_tokens,
                               int hidden_size, cudaStream_t stream);

// rms_norm_residual, with out also quantized for the integer GEMV into q8 (num_tokens rows of
// hidden_size values): the bits quantize_q8_rows gives for out as stored, one launch instead of
// two. bf16 and fp16 only; every row 16-byte aligned and hidden_size a multiple of 32, else an
// invalid-argument status.
template <typename T>
KernelStatus rms_norm_residual_q8(const T* x, const T* residual_in, T* residual_out,
                                  const float* weight, float eps, T* out, const Q8Rows& q8,
                                  int num_tokens, int hidden_size, cudaStream_t stream);

}  // namespace sluice::kernels
