// Matrix products of weights kept in their GGUF blocks for prefill and large batches, on the
// integer tensor cores (issue 29; llama.cpp's MMQ is the same idea): the tokens' activations
// quantized to 8 bits per value with a float scale per 32 (quantize_q8_rows, as for the integer
// GEMV), each 32-value block of a weight row unpacked once per tile into signed bytes in shared
// memory, and the two multiplied by mma.sync (m16n8k32; m16n8k16 for Q6_K, whose 16-value halves
// have scales of their own), each block's 32-bit sums scaled into fp32 accumulators. No weight is
// widened to a 16-bit matrix: a value costs a few integer instructions per four, not a decode to
// float and a 16-bit multiply.
//
// A thread block owns 64 tokens and 64 weight rows (32 with 64 tokens or fewer: twice the blocks
// for the SMs), four warps of 32 (or 16) rows x 32 tokens, and walks K 256 values at a time;
// where the tiles are too few for the GPU, K is split over several blocks whose fp32 sums a second
// launch adds (MmqSplit). A value's sum runs over K in the same order whatever the tile or the
// token count, so a token's outputs do not depend on its neighbours. The products equal
// quant_gemv_int8's but for the order of the float additions.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/dequantize.cuh"
#include "kernels/quant_gemv_int8.cuh"
#include "kernels/status.h"

namespace sluice::kernels {

// Whether quant_mmq has a kernel for format (the integer GEMV's formats).
bool has_quant_mmq(QuantFormat format);

// K split over `parts` thread blocks of each tile (1: none), for products whose tiles alone are
// too few to fill the GPU: each part's fp32 sums go to `partials` (quant_mmq_partial_floats
// floats), a second launch adds them in part order.
struct MmqSplit {
  int parts = 1;
  float* partials = nullptr;
};
inline constexpr int kMmqMostParts = 8;
inline constexpr int kMmqBlocksPerSm = 4;    // what quant_mmq_parts aims at
inline constexpr int kMmqSlicesPerPart = 4;  // the fewest 256-value slices of K a part takes
// The parts to split a rows x cols product into on a GPU of `sms` SMs: enough for about
// kMmqBlocksPerSm thread blocks an SM with 32-row tiles, each part at least kMmqSlicesPerPart
// slices of K, at most kMmqMostParts. A function of the shape alone, so that a token's outputs
// never depend on how many tokens share its product (a split changes the summation order).
int quant_mmq_parts(int rows, int cols, int sms);
// The floats a split's partial sums take (0 for one part).
size_t quant_mmq_partial_floats(int rows, int num_tokens, int parts);

// y[t, r] = sum_k x[t, k] . w[r, k] for t < x.num_tokens, r < rows, from the quantized x, rounded
// once to Y. w: rows rows of w_row_bytes bytes, x.cols values each in `format` blocks, from
// 256-byte aligned storage, rows back to back (as quant_gemv_int8's); x.qs 16-byte aligned.
// y: rows y_row_stride elements apart (0: rows). Returns an invalid-argument status for a format
// without a kernel, a w_row_bytes that is not x.cols' blocks, or more tokens than a grid holds.
// split: K over split.parts parts (at most the slices of K; refused without partials when more
// than one).
template <typename Y>
KernelStatus quant_mmq(QuantFormat format, const uint8_t* w, size_t w_row_bytes, int rows,
                       const Q8Rows& x, Y* y, int y_row_stride, cudaStream_t stream,
                       MmqSplit split = {});

}  // namespace sluice::kernels
