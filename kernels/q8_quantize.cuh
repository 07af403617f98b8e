// The quantization of activations for the integer products (quant_gemv_int8.cuh's Q8Rows), one
// 32-value block by the eight lanes that hold it, four values each: d = max |x| / 127 and
// q = rint(x / d) (0 for an all-zero block), the largest magnitude and the sum meeting by
// shuffles within the eight. Shared by quantize_q8_rows and the kernels that quantize their own
// output for the products that read it, so that both give the same bits.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/quant_gemv_int8.cuh"

namespace sluice::kernels::detail {

// Lanes 8k..8k+7 of the warp (part = lane % 8) hold values 4 part.. of one block in v (zeros for
// an inactive lane); an active lane writes its word of q to words[part] and part 0 the block's
// scale. Every lane of the warp calls it.
__device__ __forceinline__ void quantize_q8_quad(const float (&v)[4], bool active, int part,
                                                 uint32_t* words, Q8Scale* scale) {
  float amax = fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3])));
#pragma unroll
  for (int offset = 4; offset > 0; offset /= 2)
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
  const float d = amax / 127.0f;
  const float inv = d > 0.0f ? 1.0f / d : 0.0f;
  uint32_t word = 0;
  int sum = 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int q = static_cast<int>(rintf(v[j] * inv));
    sum += q;
    word |= (static_cast<uint32_t>(q) & 0xFFu) << (8 * j);
  }
#pragma unroll
  for (int offset = 4; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (!active) return;
  words[part] = word;
  if (part == 0) *scale = Q8Scale{d, d * static_cast<float>(sum)};
}

}  // namespace sluice::kernels::detail
