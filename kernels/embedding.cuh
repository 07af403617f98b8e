// Embedding gather: out[t, :] = table[token_ids[t], :] widened to float.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/status.h"

namespace sluice::kernels {

// table:     [vocab_size, hidden_size] fp32
// token_ids: [num_tokens]
// out:       [num_tokens, hidden_size] fp32
// Ids outside [0, vocab_size) produce zero rows (the host validates ids before launch).
KernelStatus embedding_gather_f32(const float* table, const int32_t* token_ids, float* out,
                                  int num_tokens, int hidden_size, int vocab_size,
                                  cudaStream_t stream);

}  // namespace sluice::kernels
