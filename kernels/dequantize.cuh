// Widening of GGUF's quantized weight blocks to the activation type on the device: the CUDA
// backend uploads quantized matrices as they are stored and dequantizes them here at load.
// Each value is computed with the float operations, order and roundings of the CPU's
// engine/core/dequantize.cpp (which reproduces ggml bit for bit), then rounded once to T.
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
};

// Widens n_elements values stored as `format` blocks to T.
// blocks: the blocks of n_elements values, starting at a block, at any byte address
// out:    [n_elements]
// Returns an invalid-argument status for a format not listed above or an n_elements that is
// negative or not a whole number of blocks.
template <typename T>
KernelStatus dequantize(QuantFormat format, const uint8_t* blocks, T* out, int64_t n_elements,
                        cudaStream_t stream);

}  // namespace sluice::kernels
