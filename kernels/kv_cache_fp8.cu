// FP8 KV-cache write: one block per token, one warp per row (K or V of one KV head). A warp
// finds the row's largest magnitude (a max, so the order of the shuffles cannot change it), then
// every lane encodes its elements; lane 0 stores the row's scale.
#include "kernels/kv_cache_fp8.cuh"

#include "engine/core/fp8_e4m3.h"
#include "kernels/dtype_traits.cuh"

namespace sluice::kernels {
namespace {

constexpr int kMaxWarps = 8;
constexpr int kMaxHeadDim = 1024;

template <typename T>
__global__ void write_kv_cache_fp8_kernel(const T* __restrict__ k, const T* __restrict__ v,
                                          int64_t row_stride,
                                          const int64_t* __restrict__ slot_mapping,
                                          Fp8KvLayer cache, int num_kv_heads, int head_dim) {
  const int64_t token = blockIdx.x;
  const int64_t slot = slot_mapping[token];
  if (slot < 0) return;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int num_warps = blockDim.x / 32;
  for (int row = warp; row < 2 * num_kv_heads; row += num_warps) {
    const bool is_v = row >= num_kv_heads;
    const int head = is_v ? row - num_kv_heads : row;
    const T* src = (is_v ? v : k) + token * row_stride + static_cast<int64_t>(head) * head_dim;
    float amax = 0.0f;
    for (int d = lane; d < head_dim; d += 32) amax = fmaxf(amax, fabsf(detail::to_float(src[d])));
    for (int offset = 16; offset > 0; offset /= 2)
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
    const int64_t dst_row = slot * num_kv_heads + head;
    uint8_t* codes = (is_v ? cache.v_codes : cache.k_codes) + dst_row * head_dim;
    for (int d = lane; d < head_dim; d += 32)
      codes[d] = fp8_e4m3_quantize(detail::to_float(src[d]), amax);
    if (lane == 0) (is_v ? cache.v_scales : cache.k_scales)[dst_row] = fp8_e4m3_scale(amax);
  }
}

}  // namespace

template <typename T>
KernelStatus write_kv_cache_fp8(const T* k, const T* v, int64_t row_stride,
                                const int64_t* slot_mapping, const Fp8KvLayer& cache,
                                int num_tokens, int num_kv_heads, int head_dim,
                                cudaStream_t stream) {
  if (num_tokens < 0 || num_kv_heads <= 0 || head_dim <= 0 || head_dim > kMaxHeadDim)
    return detail::invalid_argument();
  const int64_t kv_dim = static_cast<int64_t>(num_kv_heads) * head_dim;
  if (row_stride != 0 && row_stride < kv_dim) return detail::invalid_argument();
  if (num_tokens == 0) return kKernelOk;
  if (k == nullptr || v == nullptr || slot_mapping == nullptr || cache.k_codes == nullptr ||
      cache.v_codes == nullptr || cache.k_scales == nullptr || cache.v_scales == nullptr)
    return detail::invalid_argument();
  const int warps = 2 * num_kv_heads < kMaxWarps ? 2 * num_kv_heads : kMaxWarps;
  detail::launch_kernel(write_kv_cache_fp8_kernel<T>, num_tokens, 32 * warps, 0, stream, k, v,
                        row_stride != 0 ? row_stride : kv_dim, slot_mapping, cache, num_kv_heads,
                        head_dim);
  return detail::launch_status();
}

#define SLUICE_INSTANTIATE_KV_FP8(T)                                                       \
  template KernelStatus write_kv_cache_fp8<T>(const T*, const T*, int64_t, const int64_t*, \
                                              const Fp8KvLayer&, int, int, int, cudaStream_t);
SLUICE_INSTANTIATE_KV_FP8(float)
SLUICE_INSTANTIATE_KV_FP8(__nv_bfloat16)
SLUICE_INSTANTIATE_KV_FP8(__half)
#undef SLUICE_INSTANTIATE_KV_FP8

}  // namespace sluice::kernels
