// The CPU matrix product for weights that stay in their GGUF quantized blocks:
// y[T, rows] = x[T, cols] · W^T. x is quantized once per call (cpu_quantize_activations.h); each
// thread takes a contiguous range of output rows, unpacks a few rows at a time
// (cpu_quant_operands.h) and runs the tile kernels (cpu_quant_dot.h) over every token, so a
// weight block read from memory serves all the tokens of the call. Every output element is
// computed in one fixed order (cpu_quant_dot.h), so a token's outputs are bit-identical whatever
// num_tokens, the tiling or the thread split.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/backend/cpu/cpu_quant_dot.h"
#include "engine/backend/cpu/cpu_quant_operands.h"
#include "engine/core/dtype.h"
#include "engine/core/thread_pool.h"

namespace sluice {

// A quantized weight matrix [rows, cols] in its file's blocks; row r at data + r * row_bytes.
struct QuantMatrixView {
  DType dtype = DType::Q8_0;
  const uint8_t* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  size_t row_bytes = 0;
  // The first rows / 16 * 16 rows interleaved sixteen at a time (cpu_quant_interleave.h), or
  // nullptr. Where set, those rows are read from here only; data + r * row_bytes is read for the
  // rows past them.
  const uint8_t* interleaved = nullptr;
};

// Whether quant_gemm multiplies num_tokens tokens by w's interleaved tiles with the interleaved
// kernels (which take signed activations), rather than restoring their rows first.
bool uses_interleaved_kernels(const QuantMatrixView& w, int64_t num_tokens, QuantKernelIsa isa);

// y[t * ldy + r] = sum_k x[t * cols + k] * W[r, k] for t < num_tokens, r < rows, with x
// quantized to 8 bits as ggml does. x: [num_tokens, cols]. Preconditions: has_quant_kernels
// (w.dtype), w.cols a whole number of blocks, isa supported, and no other parallel_for running
// on pool.
void quant_gemm(const QuantMatrixView& w, const float* x, int64_t num_tokens, float* y, int64_t ldy,
                ThreadPool& pool, QuantKernelIsa isa = best_quant_kernel_isa());

// One product of a group (quant_gemm_group): y[t * ldy + r] = x[t] . W[r] for t < num_tokens.
struct QuantProduct {
  QuantMatrixView w;
  const float* x = nullptr;
  int64_t num_tokens = 0;
  float* y = nullptr;
  int64_t ldy = 0;
  // An earlier product of the group with the same x, num_tokens and weight type (and columns):
  // its quantized activations are used instead of quantizing x again; -1 = none.
  int shares_activations_with = -1;
  // x already quantized for this weight type (num_tokens rows; x is not read), or nullptr.
  const QuantizedActivations* activations = nullptr;
};

// Runs every product of the group with the same bits quant_gemm gives each of them, in two
// parallel loops for the whole group: one quantizes every product's activations, one shares the
// row ranges of every product out to the threads in pieces of about equal work. For the many
// small products of a mixture-of-experts layer (a few tokens per expert), where two loops per
// product would cost more than the products. Preconditions as for quant_gemm, for each product.
void quant_gemm_group(std::span<const QuantProduct> products, ThreadPool& pool,
                      QuantKernelIsa isa = best_quant_kernel_isa());

}  // namespace sluice
