// Embedding gather: out[t, :] = table[token_ids[t], :] * scale.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/status.h"

namespace sluice::kernels {

// table:     [vocab_size, hidden_size]
// token_ids: [num_tokens]
// out:       [num_tokens, hidden_size]
// scale:     1 copies the rows bit for bit; otherwise each value is multiplied in float and the
//            product rounded to T once (Gemma: sqrt(hidden_size)).
// Ids outside [0, vocab_size) produce zero rows (the host validates ids before launch).
template <typename T>
KernelStatus embedding_gather(const T* table, const int32_t* token_ids, T* out, int num_tokens,
                              int hidden_size, int vocab_size, float scale, cudaStream_t stream);

}  // namespace sluice::kernels
