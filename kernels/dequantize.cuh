// Widening of GGUF's quantized weight blocks to the activation type on the device: a whole
// tensor (tests and tools), or the rows of an embedding table kept in its blocks (the CUDA
// backend's token lookup). Products read the blocks directly (quant_linear.cuh). Each value is
// computed with the float operations, order and roundings of the CPU's engine/core/dequantize.cpp
// (which reproduces ggml bit for bit), then rounded once to T.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/status.h"

namespace sluice::kernels {

// The block formats, numbered as GGUF and ggml number them (the type id of a tensor header), so
// a caller passes the id its dtype table holds.
enum class QuantFormat : uint32_t {
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  MXFP4 = 39,
  // Not a block format: values stored in the activation type T (quant_linear only).
  Dense = 0xFFFFFFFFu,
};

// Widens n_elements values stored as `format` blocks to T.
// blocks: the blocks of n_elements values, starting at a block, at any byte address
// out:    [n_elements]
// Returns an invalid-argument status for a format not listed above or an n_elements that is
// negative or not a whole number of blocks.
template <typename T>
KernelStatus dequantize(QuantFormat format, const uint8_t* blocks, T* out, int64_t n_elements,
                        cudaStream_t stream);

// The embedding lookup of a table kept in its blocks: out[t, :] = table[token_ids[t], :], each
// value rounded to T and, when scale is not 1, multiplied by scale in float and rounded to T again
// (what embedding_gather gives over the table widened to T).
// table:     [vocab_size rows of row_bytes bytes], cols values per row
// token_ids: [num_tokens]; ids outside [0, vocab_size) produce zero rows
// out:       [num_tokens, cols]
// Returns an invalid-argument status for a format that is not a block format, a cols that is not
// whole blocks, or a row_bytes that is not cols' blocks.
template <typename T>
KernelStatus dequantize_rows(QuantFormat format, const uint8_t* table, size_t row_bytes,
                             const int32_t* token_ids, T* out, int num_tokens, int cols,
                             int vocab_size, float scale, cudaStream_t stream);

}  // namespace sluice::kernels
