// Writing K and V into an FP8 E4M3 KV cache (engine/core/fp8_e4m3.h has the format and the
// per-head scale). rope_and_cache (rope_cache.cuh) rotates q and k in place without touching the
// cache; this kernel then quantizes each token's (rotated) k and v heads into their slots.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/status.h"

namespace sluice::kernels {

// A cache element: one E4M3 code. A distinct type so that templates over the cache's element
// type pick the FP8 path.
struct Fp8E4M3 {
  uint8_t bits;
};

// One layer's FP8 cache: codes of K and V, [num_slots, num_kv_heads, head_dim] (num_slots =
// num_blocks * block_size, as the activation-type cache), and their scales, one float per
// (slot, KV head): [num_slots, num_kv_heads].
struct Fp8KvLayer {
  uint8_t* k_codes = nullptr;
  uint8_t* v_codes = nullptr;
  float* k_scales = nullptr;
  float* v_scales = nullptr;
};

// k, v:         [num_tokens, num_kv_heads * head_dim], rows row_stride apart (0: dense rows)
// slot_mapping: [num_tokens]; a slot < 0 (padding) is skipped
// Row (token, KV head) of K goes to k_codes[slot, head, :] as fp8_e4m3_quantize(x, amax) with its
// scale fp8_e4m3_scale(amax) in k_scales[slot, head]; the same for V. head_dim <= 1024.
template <typename T>
KernelStatus write_kv_cache_fp8(const T* k, const T* v, int64_t row_stride,
                                const int64_t* slot_mapping, const Fp8KvLayer& cache,
                                int num_tokens, int num_kv_heads, int head_dim,
                                cudaStream_t stream);

}  // namespace sluice::kernels
