// Private: the one kernel body behind embedding_gather and gather_rows, which both copy whole
// rows picked by an index list: out[r, :] = in[row_ids[r], :] * scale.
//
// One block per output row; a row moves in 16-byte packs when both matrices are 16-byte aligned
// and dim is a multiple of the pack, element by element otherwise. A row id outside
// [0, num_in_rows) writes a zero row (num_in_rows < 0: only negative ids are out of range).
// scale == 1 copies the bits; any other scale multiplies in float and rounds the product to T
// once (Gemma's embeddings times sqrt(hidden), as the CPU backend scales its fp32 rows).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/dtype_traits.cuh"

namespace sluice::kernels::detail {

// in:      [num_in_rows, dim]
// row_ids: [gridDim.x]
// out:     [gridDim.x, dim]
template <typename T>
__device__ __forceinline__ T scaled(T x, float scale) {
  return scale == 1.0f ? x : from_float<T>(to_float(x) * scale);
}

template <typename T>
__global__ void row_gather_kernel(const T* __restrict__ in, const int32_t* __restrict__ row_ids,
                                  T* __restrict__ out, int dim, int64_t num_in_rows, float scale,
                                  bool is_packed) {
  const int64_t out_row = blockIdx.x;
  const int32_t in_row = row_ids[out_row];
  const bool is_valid = in_row >= 0 && (num_in_rows < 0 || in_row < num_in_rows);
  const T* src = in + static_cast<int64_t>(is_valid ? in_row : 0) * dim;
  T* dst = out + out_row * dim;
  if (is_packed) {
    using P = Pack<T>;
    const int num_packs = dim / P::kSize;
    P zero;
    for (int j = 0; j < P::kSize; ++j) zero.values[j] = from_float<T>(0.0f);
    for (int p = threadIdx.x; p < num_packs; p += blockDim.x) {
      P pack = is_valid ? reinterpret_cast<const P*>(src)[p] : zero;
      if (scale != 1.0f) {
#pragma unroll
        for (int j = 0; j < P::kSize; ++j) pack.values[j] = scaled(pack.values[j], scale);
      }
      reinterpret_cast<P*>(dst)[p] = pack;
    }
  } else {
    for (int i = threadIdx.x; i < dim; i += blockDim.x) {
      dst[i] = is_valid ? scaled(src[i], scale) : from_float<T>(0.0f);
    }
  }
}

// Launches row_gather_kernel for num_rows rows of dim elements.
template <typename T>
KernelStatus launch_row_gather(const T* in, const int32_t* row_ids, T* out, int num_rows, int dim,
                               int64_t num_in_rows, float scale, cudaStream_t stream) {
  if (num_rows < 0 || dim < 0) return invalid_argument();
  if (num_rows == 0 || dim == 0) return kKernelOk;
  const bool is_packed =
      is_aligned_16(in) && is_aligned_16(out) && dim % Pack<T>::kSize == 0;
  const int units = is_packed ? dim / Pack<T>::kSize : dim;
  // A warp at least; 256 threads cover a 4096-wide bf16 row in two packs each.
  const int threads = units >= 256 ? 256 : 32 * ((units + 31) / 32);
  launch_kernel(row_gather_kernel<T>, num_rows, threads, 0, stream, in, row_ids, out, dim,
                num_in_rows, scale, is_packed);
  return launch_status();
}

}  // namespace sluice::kernels::detail
