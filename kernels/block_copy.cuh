// Copy-on-write of KV blocks: for every layer, block dst[i] becomes a copy of block src[i].
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/status.h"

namespace sluice::kernels {

// k_caches, v_caches: [num_layers] device pointers (a device array of pointers) to each
//                     layer's cache, laid out [num_blocks, block_size, num_kv_heads, head_dim]
// src, dst:           [num_copies] block ids (device)
// block_elements:     block_size * num_kv_heads * head_dim
template <typename T>
KernelStatus copy_blocks(T* const* k_caches, T* const* v_caches, const int32_t* src, const int32_t* dst,
                         int num_copies, int num_layers, int64_t block_elements, cudaStream_t stream);

}  // namespace sluice::kernels
