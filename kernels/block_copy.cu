// Copy-on-write of KV blocks. Grid (num_copies, num_layers, 2): one block of threads copies one
// KV block of one layer, of K (z = 0) or V (z = 1), so every (copy, layer, cache) is independent
// and the whole order list is one launch. A KV block is one contiguous chunk of block_elements
// values per layer; it moves in 16-byte packs when the layer's cache pointer (read on the device,
// so checked there) is 16-byte aligned and block_elements is a multiple of the pack.
#include "kernels/block_copy.cuh"

#include "kernels/dtype_traits.cuh"

namespace sluice::kernels {
namespace {

using detail::Pack;

constexpr int kThreads = 256;

// k_caches, v_caches: [num_layers] pointers to [num_blocks, block_elements]
// src, dst:           [num_copies]
template <typename T>
__global__ void copy_blocks_kernel(T* const* __restrict__ k_caches, T* const* __restrict__ v_caches,
                                   const int32_t* __restrict__ src, const int32_t* __restrict__ dst,
                                   int64_t block_elements) {
  const int copy_idx = blockIdx.x;
  const int layer = blockIdx.y;
  T* cache = blockIdx.z == 0 ? k_caches[layer] : v_caches[layer];
  const T* from = cache + static_cast<int64_t>(src[copy_idx]) * block_elements;
  T* to = cache + static_cast<int64_t>(dst[copy_idx]) * block_elements;
  using P = Pack<T>;
  if (detail::is_aligned_16(cache) && block_elements % P::kSize == 0) {
    const int64_t num_packs = block_elements / P::kSize;
    for (int64_t p = threadIdx.x; p < num_packs; p += blockDim.x) {
      reinterpret_cast<P*>(to)[p] = reinterpret_cast<const P*>(from)[p];
    }
  } else {
    for (int64_t i = threadIdx.x; i < block_elements; i += blockDim.x) to[i] = from[i];
  }
}

}  // namespace

template <typename T>
KernelStatus copy_blocks(T* const* k_caches, T* const* v_caches, const int32_t* src,
                         const int32_t* dst, int num_copies, int num_layers, int64_t block_elements,
                         cudaStream_t stream) {
  constexpr int kMaxGridY = 65535;
  if (num_copies < 0 || num_layers < 0 || num_layers > kMaxGridY || block_elements < 0) {
    return detail::invalid_argument();
  }
  if (num_copies == 0 || num_layers == 0 || block_elements == 0) return kKernelOk;
  const dim3 grid(static_cast<unsigned int>(num_copies), static_cast<unsigned int>(num_layers), 2);
  detail::launch_kernel(copy_blocks_kernel<T>, grid, kThreads, 0, stream, k_caches, v_caches, src,
                        dst, block_elements);
  return detail::launch_status();
}

#define SLUICE_INSTANTIATE_COPY_BLOCKS(T)                                                         \
  template KernelStatus copy_blocks<T>(T* const*, T* const*, const int32_t*, const int32_t*, int, \
                                       int, int64_t, cudaStream_t);
SLUICE_INSTANTIATE_COPY_BLOCKS(float)
SLUICE_INSTANTIATE_COPY_BLOCKS(__nv_bfloat16)
SLUICE_INSTANTIATE_COPY_BLOCKS(__half)
SLUICE_INSTANTIATE_COPY_BLOCKS(uint8_t)  // FP8 codes (their float scales copy as float)
#undef SLUICE_INSTANTIATE_COPY_BLOCKS

}  // namespace sluice::kernels
