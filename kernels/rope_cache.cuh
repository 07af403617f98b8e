// RoPE on q and k, fused with writing k and v into the paged KV cache through the slot mapping.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/status.h"

namespace sluice::kernels {

// q:            [num_tokens, num_heads * head_dim]      rotated in place
// k:            [num_tokens, num_kv_heads * head_dim]   rotated, then written to k_cache
// v:            [num_tokens, num_kv_heads * head_dim]   written to v_cache
// row_stride:   elements from one token's q, k and v rows to the next; 0 for three dense
//               arrays, q_size + 2 * kv_size when they are the parts of one fused q|k|v row
// positions:    [num_tokens]
// slot_mapping: [num_tokens] block_id * block_size + offset
// inv_freq:     [rotary_dim / 2] per-pair inverse frequencies (scaling already applied), float:
//               the layer's own table where layers differ (Gemma 3's local and global bases)
// k_cache, v_cache: one layer, [num_blocks, block_size, num_kv_heads, head_dim]; both null: q and
//               k are rotated in place and nothing is cached (an FP8 cache: kv_cache_fp8.cuh)
// rotary_dim:   the dimensions of each head that rotate (even, at most head_dim): the first
//               rotary_dim; the rest pass through (Phi-3's partial rotary), into the cache too
// interleaved: pairs (2i, 2i+1) (llama2.c, GGUF) when true, (i, i + rotary_dim/2) otherwise.
// Angles are computed as position * inv_freq in float after reducing position * inv_freq
// modulo 2*pi in double precision, so long contexts keep their accuracy.
template <typename T>
KernelStatus rope_and_cache(T* q, T* k, const T* v, const int32_t* positions,
                            const int64_t* slot_mapping, const float* inv_freq, bool interleaved,
                            T* k_cache, T* v_cache, int num_tokens, int num_heads, int num_kv_heads,
                            int head_dim, int rotary_dim, int block_size, int64_t row_stride,
                            cudaStream_t stream);

}  // namespace sluice::kernels
