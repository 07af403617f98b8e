// Embedding gather: one block per token copies (or scales) the token's table row, in 16-byte
// packs when aligned (kernels/row_gather.cuh). Ids outside the vocabulary give zero rows.
#include "kernels/embedding.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/row_gather.cuh"

namespace sluice::kernels {

template <typename T>
KernelStatus embedding_gather(const T* table, const int32_t* token_ids, T* out, int num_tokens,
                              int hidden_size, int vocab_size, float scale, cudaStream_t stream) {
  if (vocab_size < 0) return detail::invalid_argument();
  return detail::launch_row_gather(table, token_ids, out, num_tokens, hidden_size,
                                   static_cast<int64_t>(vocab_size), scale, stream);
}

#define SLUICE_INSTANTIATE_EMBEDDING(T)                                                         \
  template KernelStatus embedding_gather<T>(const T*, const int32_t*, T*, int, int, int, float, \
                                            cudaStream_t);
SLUICE_INSTANTIATE_EMBEDDING(float)
SLUICE_INSTANTIATE_EMBEDDING(__nv_bfloat16)
SLUICE_INSTANTIATE_EMBEDDING(__half)
#undef SLUICE_INSTANTIATE_EMBEDDING

}  // namespace sluice::kernels
