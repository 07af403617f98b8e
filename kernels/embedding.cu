#include "kernels/embedding.cuh"

namespace sluice::kernels {

namespace {

__global__ void embedding_gather_kernel(const float* __restrict__ table,
                                        const int32_t* __restrict__ token_ids,
                                        float* __restrict__ out, int hidden_size, int vocab_size) {
  const int t = blockIdx.x;
  const int32_t id = token_ids[t];
  const bool valid = id >= 0 && id < vocab_size;
  const float* row = table + static_cast<int64_t>(valid ? id : 0) * hidden_size;
  float* dst = out + static_cast<int64_t>(t) * hidden_size;
  for (int i = threadIdx.x; i < hidden_size; i += blockDim.x) dst[i] = valid ? row[i] : 0.0f;
}

}  // namespace

KernelStatus embedding_gather_f32(const float* table, const int32_t* token_ids, float* out,
                                  int num_tokens, int hidden_size, int vocab_size,
                                  cudaStream_t stream) {
  if (num_tokens <= 0) return kKernelOk;
  const int threads = hidden_size >= 256 ? 256 : 32 * ((hidden_size + 31) / 32);
  embedding_gather_kernel<<<num_tokens, threads, 0, stream>>>(table, token_ids, out, hidden_size,
                                                              vocab_size);
  return static_cast<KernelStatus>(cudaGetLastError());
}

}  // namespace sluice::kernels
