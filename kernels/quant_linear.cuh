// Matrix products straight from a weight's stored blocks: y = x · wᵀ where w stays in its GGUF
// block format on the device (or in the activation type T, QuantFormat::Dense), so a quantized
// model takes its file's bytes in VRAM and a step reads each weight block, never a widened copy.
//
// Two kernels, chosen by the number of tokens:
// - up to kQuantGemvMaxTokens tokens (decode, small batches): a GEMV in which each warp owns one
//   output row, decodes each group of 8 weights once into registers and multiplies it with every
//   token's activations in fp32 (up to 8 tokens per pass over the row, the weights of a row read
//   once per pass);
// - more tokens (prefill, large batches): tiles of 32 or 128 tokens x 64 rows; the rows' raw
//   blocks stream into shared memory a slice at a time (cp.async, the next slice while this one is
//   multiplied), each 32-value step is decoded there into T beside the tokens' activations and
//   multiplied on the tensor cores (WMMA, fp32 accumulation; bf16/fp16 on sm_80 and newer,
//   kernels/quant_tile_mma.cuh), or with fp32 FMAs for fp32 activations and older GPUs.
// Both accumulate in fp32; the tile kernel's weights are rounded to T first, as a matrix
// dequantized to T at load would be, the GEMV's are not rounded at all.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/dequantize.cuh"
#include "kernels/status.h"

namespace sluice::kernels {

// The most tokens the GEMV kernel takes; more go to the tile kernel (when cols is a multiple of
// kQuantTileK, as every block format's is).
inline constexpr int kQuantGemvMaxTokens = 16;
inline constexpr int kQuantTileK = 32;

// y[t, r] = sum_k x[t, k] · w[r, k] for t < num_tokens, r < rows, in fp32, rounded once to Y.
// w:  rows rows, row r at w + r · w_row_bytes: cols values in `format` blocks (Dense: cols values
//     of T, cols a multiple of 8, w 16-byte aligned)
// x:  [num_tokens] rows of cols values, x_row_stride elements apart (0: cols)
// y:  [num_tokens] rows, y_row_stride elements apart (0: rows); the product fills the first
//     `rows` columns of each, so stacked matrices stored in different formats write their column
//     ranges of one output
// gemv_max_tokens (0..kQuantGemvMaxTokens): the most tokens the GEMV takes; more go to the tiles.
// Returns an invalid-argument status for a negative count, strides smaller than the rows, a
// format without a kernel, a w_row_bytes that is not cols' blocks, or a gemv_max_tokens out of
// its range.
template <typename T, typename Y>
KernelStatus quant_linear(QuantFormat format, const uint8_t* w, size_t w_row_bytes, int rows,
                          int cols, const T* x, int x_row_stride, Y* y, int y_row_stride,
                          int num_tokens, cudaStream_t stream,
                          int gemv_max_tokens = kQuantGemvMaxTokens);

}  // namespace sluice::kernels
