// Small element-wise ops of a decoder block.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/quant_gemv_int8.cuh"
#include "kernels/status.h"

namespace sluice::kernels {

// The activations of a gated feed-forward: silu_mul_rows', gelu_tanh_mul_rows' and
// swiglu_oai_mul_rows'.
enum class GatedActivation { Silu, GeluTanh, SwigluOai };

// out[i] = silu(gate[i]) * up[i] over n elements (out may alias gate).
template <typename T>
KernelStatus silu_mul(const T* gate, const T* up, T* out, int64_t n, cudaStream_t stream);

// out[r, c] = silu(gate[r, c]) * up[r, c] for rows x cols elements whose rows lie row_stride
// elements apart in all three (out may alias gate). For a fused gate|up product of [rows,
// 2 * cols]: gate = gate_up, up = gate_up + cols, out = gate_up, row_stride = 2 * cols.
template <typename T>
KernelStatus silu_mul_rows(const T* gate, const T* up, T* out, int64_t rows, int64_t cols,
                           int64_t row_stride, cudaStream_t stream);

// out[r, c] = gelu_tanh(gate[r, c]) * up[r, c] (GeGLU: GELU's tanh approximation in float, as
// the CPU backend's gelu_tanh_mul), with the rows and aliasing of silu_mul_rows.
template <typename T>
KernelStatus gelu_tanh_mul_rows(const T* gate, const T* up, T* out, int64_t rows, int64_t cols,
                                int64_t row_stride, cudaStream_t stream);

// out[r, c] = g * sigmoid(1.702 g) * (u + 1) with g = min(gate, 7), u = clamp(up, -7, 7)
// (gpt-oss's clamped SwiGLU, as the CPU backend's swiglu_oai_mul), with the rows and aliasing of
// silu_mul_rows.
template <typename T>
KernelStatus swiglu_oai_mul_rows(const T* gate, const T* up, T* out, int64_t rows, int64_t cols,
                                 int64_t row_stride, cudaStream_t stream);

// The activation's rows as the *_mul_rows above write them (the same bits into out), and out's
// rows quantized into q8 as quantize_q8_rows quantizes them (the same bits), in one launch: for
// the integer GEMV of the down product, which then reads q8 instead of quantizing out itself.
// cols is a multiple of 32; q8 holds rows x cols. Returns an invalid-argument status otherwise.
template <typename T>
KernelStatus gated_mul_rows_q8(GatedActivation activation, const T* gate, const T* up, T* out,
                               int64_t rows, int64_t cols, int64_t row_stride, const Q8Rows& q8,
                               cudaStream_t stream);

// x[i] = cap * tanh(x[i] / cap) over n elements (Gemma 2's final logit soft-cap). cap > 0.
template <typename T>
KernelStatus soft_cap(T* x, int64_t n, float cap, cudaStream_t stream);

// x[t, i] += bias[i] for num_tokens rows of dim elements; bias is float.
template <typename T>
KernelStatus add_bias(T* x, const float* bias, int num_tokens, int dim, cudaStream_t stream);

// out[t, :] = in[rows[t], :] for num_rows rows of dim elements (gathering the rows that need
// logits before the final norm and LM head).
template <typename T>
KernelStatus gather_rows(const T* in, const int32_t* rows, T* out, int num_rows, int dim,
                         cudaStream_t stream);

// Converts n elements between types (weights at load, logits to float).
template <typename From, typename To>
KernelStatus convert(const From* in, To* out, int64_t n, cudaStream_t stream);

}  // namespace sluice::kernels
