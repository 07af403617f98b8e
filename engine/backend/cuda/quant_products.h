// How products of matrices kept in their GGUF blocks run, by token count. Three ways:
// - a GEMV up to kQuantGemvMaxTokens tokens: the integer one (kernels/quant_gemv_int8.cuh) for
//   bf16 and fp16 activations and the formats it has, else quant_linear's float one; from the
//   count where quant_linear's tiles measured faster than it, the tiles;
// - tiles (more tokens), which read the blocks directly: quant_linear's, which decode them into
//   16-bit values for WMMA (kernels/quant_linear.cuh), or for bf16 and fp16 activations and the
//   integer GEMV's formats the integer ones (kernels/quant_mmq.cuh), over the tokens quantized
//   CudaBackendOptions::quant_mmq_chunk_tokens at a time, whichever measured faster at 128
//   tokens;
// - dequantized: each run widened to the activation type in row chunks into a scratch buffer,
//   then cuBLAS; the matrix stays in its blocks in VRAM, the scratch holds a few hundred MiB of
//   it at a time (CudaBackendOptions::quant_scratch_max_bytes).
// Which is faster depends on the device and the kernels' tuning, so it is measured when the
// backend is built: the run in blocks with the most elements among layer 0's matrices and the LM
// head, each way, at 1, 2, 4, 8 and 16 tokens (GEMV against dequantized) and at 32, 128 and 512
// (tiles against dequantized).
// The first token count at which the direct kernel loses ends its range. On an H200 (issue 29's
// first GPU run) the tiles gave 2000 prompt tokens/s on an 8B Q4_K model against 36000 for the
// same model in BF16 through cuBLAS. The CPU kernel emulator measures nothing: there the direct
// kernels take every count, unless the options set the ranges.
#pragma once

#include <cuda_runtime.h>
#include <library_types.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>

#include "engine/backend/cuda/cublas_gemm.h"
#include "engine/backend/cuda/cuda_buffer.h"
#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_weights.h"
#include "engine/core/error.h"
#include "kernels/quant_gemv_int8.cuh"
#include "kernels/quant_linear.cuh"
#include "kernels/quant_mmq.cuh"

namespace sluice {

struct QuantProducts {
  int gemv_max_tokens = 0;   // 1..gemv_max_tokens tokens: a GEMV (or the tiles, from tiles_min)
  int tiles_max_tokens = 0;  // kQuantGemvMaxTokens+1..tiles_max_tokens tokens: quant_linear's tiles
  // The fewest tokens the tiles take, where they beat the GEMV on the device; at most
  // kQuantGemvMaxTokens + 1 (the GEMV's end).
  int tiles_min_tokens = kernels::kQuantGemvMaxTokens + 1;
  void* scratch = nullptr;  // the dequantized way's buffer (null: the model has no blocks)
  size_t scratch_bytes = 0;
  // The GEMV of the formats quant_gemv_int8 has (bf16 and fp16 activations; fp32 ones keep the
  // float GEMV, whose products follow the CPU's on widened weights): the integer one, over the
  // tokens' activations quantized into q8 (q8_bytes).
  bool int8_gemv = false;
  void* q8 = nullptr;
  size_t q8_bytes = 0;
  int q8_tokens = 0;  // the tokens q8 holds of the widest row in blocks (a chunk of the tiles)
  // The tiles of the formats quant_mmq has, with int8_gemv: the integer ones (true) or
  // quant_linear's 16-bit ones.
  bool mmq = false;
  // Their split of K: mmq_parts parts for every product (0: quant_mmq_parts of its shape on
  // mmq_sms SMs), the partial sums in mmq_partials (mmq_partial_floats floats).
  int mmq_parts = 0;
  int mmq_sms = 1;
  float* mmq_partials = nullptr;
  size_t mmq_partial_floats = 0;
  // Where a norm quantizes its output for the products that read it (kQuantInt8GemvMaxTokens
  // rows of the hidden size; CudaBackendOptions::fused_norm_quantize); null: the products do.
  void* normed_q8 = nullptr;
  // The same for a gated activation's output, which the down product reads (the intermediate
  // size); null: the product quantizes it.
  void* hidden_q8 = nullptr;
  mutable int64_t num_fused_norms = 0;  // norms enqueued with their output quantized (counters)
  mutable int64_t num_fused_activations = 0;  // gated activations enqueued so (counters)
  std::string reason;                         // for describe()

  // Whether num_tokens tokens go through the direct kernels (else the dequantized way).
  bool takes_quant_linear(int num_tokens) const;
  // The most tokens a GEMV takes: up to the measured range and below the tiles'.
  int gemv_tokens() const { return std::min(gemv_max_tokens, tiles_min_tokens - 1); }
  // Whether a run in `format` multiplies num_tokens tokens by the integer GEMV.
  bool takes_int8_gemv(kernels::QuantFormat format, int num_tokens) const {
    return int8_gemv && q8 && num_tokens <= kernels::kQuantInt8GemvMaxTokens &&
           num_tokens < tiles_min_tokens && kernels::has_int8_gemv(format);
  }
  // Whether a run in `format` multiplies num_tokens tokens by the integer tiles.
  bool takes_mmq(kernels::QuantFormat format, int num_tokens) const {
    return mmq && int8_gemv && q8 && !takes_int8_gemv(format, num_tokens) &&
           kernels::has_quant_mmq(format);
  }
  // The integer tiles' split of a rows x cols run's K.
  kernels::MmqSplit mmq_split(int rows, int cols) const {
    const int parts = mmq_parts > 0 ? mmq_parts : kernels::quant_mmq_parts(rows, cols, mmq_sms);
    return {parts, parts > 1 ? mmq_partials : nullptr};
  }
};

// The bytes the integer products' quantized activations take for these weights: `tokens` tokens
// (at least the integer GEMV's) of the widest row of a matrix in blocks (0 when none is).
size_t quant_q8_bytes(const CudaWeights& weights, int tokens);

// y[num_tokens, w.rows] = x . w^T with every run read from its blocks (or, a run in the activation
// type, as it is): the integer GEMV where `p` says (x quantized once for every run, or already,
// in `ready`), or the integer tiles (x quantized once, or a chunk of tokens at a time when they are
// more than q8 holds), else quant_linear. p may be null (quant_linear alone).
template <typename T, typename Y>
void direct_product(const QuantProducts* p, const CudaMatrix& w, const T* x, int x_row_stride, Y* y,
                    int num_tokens, cudaStream_t stream, const kernels::Q8Rows* ready = nullptr) {
  kernels::Q8Rows q8{};
  if (ready && ready->num_tokens == num_tokens && ready->cols == w.cols) q8 = *ready;
  int first_row = 0;
  for (const CudaMatrixRun& run : w.runs) {
    const auto* data = static_cast<const uint8_t*>(run.data);
    if (p && p->takes_int8_gemv(run.format, num_tokens)) {
      if (!q8.qs) {
        if (kernels::q8_rows_bytes(num_tokens, w.cols) > p->q8_bytes)
          fail("the integer GEMV's activations of ", num_tokens, " x ", w.cols, " exceed ",
               p->q8_bytes, " bytes");
        q8 = kernels::q8_rows_in(p->q8, num_tokens, w.cols);
        SLUICE_KERNEL_CHECK(
            kernels::quantize_q8_rows<T>(x, x_row_stride > 0 ? x_row_stride : w.cols, q8, stream));
      }
      SLUICE_KERNEL_CHECK(kernels::quant_gemv_int8<Y>(run.format, data, run.row_bytes, run.rows, q8,
                                                      y + first_row, w.rows, stream));
    } else if (p && p->takes_mmq(run.format, num_tokens)) {
      const int stride = x_row_stride > 0 ? x_row_stride : w.cols;
      if (num_tokens <= p->q8_tokens) {
        if (!q8.qs) {
          q8 = kernels::q8_rows_in(p->q8, num_tokens, w.cols);
          SLUICE_KERNEL_CHECK(kernels::quantize_q8_rows<T>(x, stride, q8, stream));
        }
        SLUICE_KERNEL_CHECK(kernels::quant_mmq<Y>(run.format, data, run.row_bytes, run.rows, q8,
                                                  y + first_row, w.rows, stream,
                                                  p->mmq_split(run.rows, w.cols)));
      } else {
        // Chunks of tokens through the one buffer: every run quantizes its own.
        for (int t0 = 0; t0 < num_tokens; t0 += p->q8_tokens) {
          const int n = std::min(p->q8_tokens, num_tokens - t0);
          const kernels::Q8Rows chunk = kernels::q8_rows_in(p->q8, n, w.cols);
          SLUICE_KERNEL_CHECK(kernels::quantize_q8_rows<T>(x + static_cast<int64_t>(t0) * stride,
                                                           stride, chunk, stream));
          SLUICE_KERNEL_CHECK(
              kernels::quant_mmq<Y>(run.format, data, run.row_bytes, run.rows, chunk,
                                    y + static_cast<int64_t>(t0) * w.rows + first_row, w.rows,
                                    stream, p->mmq_split(run.rows, w.cols)));
        }
      }
    } else {
      const int gemv_max = p ? std::min(kernels::kQuantGemvMaxTokens, p->tiles_min_tokens - 1)
                             : kernels::kQuantGemvMaxTokens;
      SLUICE_KERNEL_CHECK((kernels::quant_linear<T, Y>(run.format, data, run.row_bytes, run.rows,
                                                       w.cols, x, x_row_stride, y + first_row,
                                                       w.rows, num_tokens, stream, gemv_max)));
    }
    first_row += run.rows;
  }
}

// The scratch the dequantized way needs for these weights: the largest quantized run in the
// activation type (element_bytes each), at most max_bytes but at least one row; 0 when no matrix
// is quantized.
size_t quant_scratch_bytes(const CudaWeights& weights, size_t element_bytes, size_t max_bytes);

// y[num_tokens, w.rows] (y_type: the activation type's or fp32) = x[num_tokens, w.cols] . w^T the
// dequantized way: every quantized run widened into scratch a chunk of rows at a time and
// multiplied by cuBLAS into its column range of y; a run in the activation type by cuBLAS as it
// is. x's rows x_row_stride elements apart (0: w.cols).
void dequantized_product(const CublasGemm& gemm, ActivationDType dtype, const void* x,
                         int x_row_stride, const CudaMatrix& w, void* y, cudaDataType y_type,
                         int num_tokens, void* scratch, size_t scratch_bytes, cudaStream_t stream);

// How make_quant_products sets the products up (CudaBackendOptions' quant_* fields).
struct QuantProductsSetup {
  std::optional<int> direct_max_tokens;  // unset: the ranges measured
  size_t scratch_max_bytes = 0;
  int mmq_chunk_tokens = 256;
  int mmq_parts = 0;  // 0: by shape
  int sms = 1;        // the device's
};

// The buffers make_quant_products allocates.
struct QuantProductsBuffers {
  DeviceBuffer scratch;       // the dequantized way's
  DeviceBuffer q8;            // the integer products' quantized activations
  DeviceBuffer mmq_partials;  // the integer tiles' partial sums of a split K
  size_t bytes() const { return scratch.bytes() + q8.bytes() + mmq_partials.bytes(); }
};

// The products of these weights: their buffers allocated, and the ranges measured on the device,
// or those of setup.direct_max_tokens when given (up to that many tokens from the blocks, more
// widened). Empty (no buffers) when no matrix is in blocks.
QuantProducts make_quant_products(const CudaWeights& weights, const CublasGemm& gemm,
                                  ActivationDType dtype, const QuantProductsSetup& setup,
                                  QuantProductsBuffers& buffers, cudaStream_t stream);

// Measures the ranges of `base` (its buffers and int8_gemv set) on the device (under the emulator:
// every count to the direct kernels) and returns it with them and the reason.
QuantProducts choose_quant_products(const CudaWeights& weights, const CublasGemm& gemm,
                                    ActivationDType dtype, QuantProducts base, cudaStream_t stream);

}  // namespace sluice
