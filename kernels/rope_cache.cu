// RoPE on q and k fused with the KV-cache write. One block per token: its threads first compute
// the token's cos/sin for each of the rotary_dim / 2 pairs into shared memory (once per token,
// shared by every head), then rotate q's pairs, rotate k's pairs and write them to k and to
// k_cache, copy k's unrotated dimensions (partial rotary only) to k_cache, and copy v to v_cache
// (in 16-byte packs when aligned).
//
// The angle. position * inv_freq reaches ~1.3e5 rad at position 131071; a float angle there is
// only good to ~1e-2 rad. The product is formed in double (exact for positions below 2^29, since
// inv_freq has a 24-bit mantissa) and reduced to [-pi, pi] by a Cody-Waite step against 2*pi
// split in two doubles: r = (angle - n * hi) - n * lo with n = rint(angle / (2*pi)), each step a
// single fma. That is a double-precision reduction as accurate as fmod against a rounded 2*pi
// (about 1e-15 rad here) for two fmas instead of fmod's loop, so it stays cheap on GPUs with slow
// FP64. The reduced angle then goes to float and sincosf (accurate, not the __sincosf
// intrinsic), which leaves errors near 3e-7 rad at any position.
//
// A slot < 0 (padding) skips the cache write for that token, as in vLLM; q and k are still rotated.
// Null caches skip every cache write: an FP8 cache is written afterwards by write_kv_cache_fp8.
#include "kernels/rope_cache.cuh"

#include "kernels/dtype_traits.cuh"

namespace sluice::kernels {
namespace {

using detail::from_float;
using detail::Pack;
using detail::to_float;

constexpr double kInverseTwoPi = 0.15915494309189533577;
constexpr double kTwoPiHigh = 6.283185307179586232;   // 2*pi rounded to double
constexpr double kTwoPiLow = 2.4492935982947064e-16;  // 2*pi - kTwoPiHigh

// Returns position * inv_freq reduced to [-pi, pi], in float.
__device__ __forceinline__ float reduced_angle(int32_t position, float inv_freq) {
  const double angle = static_cast<double>(position) * static_cast<double>(inv_freq);
  const double turns = rint(angle * kInverseTwoPi);
  double reduced = fma(-turns, kTwoPiHigh, angle);
  reduced = fma(-turns, kTwoPiLow, reduced);
  return static_cast<float>(reduced);
}

// Rotates pair pair_idx of one head in place and returns the rotated pair (first, second).
template <typename T>
__device__ __forceinline__ void rotate_pair(T* head, int pair_idx, int half, bool interleaved,
                                            float cos_value, float sin_value, T& first_out,
                                            T& second_out) {
  const int a = interleaved ? 2 * pair_idx : pair_idx;
  const int b = interleaved ? 2 * pair_idx + 1 : pair_idx + half;
  const float x0 = to_float(head[a]);
  const float x1 = to_float(head[b]);
  first_out = from_float<T>(x0 * cos_value - x1 * sin_value);
  second_out = from_float<T>(x0 * sin_value + x1 * cos_value);
  head[a] = first_out;
  head[b] = second_out;
}

// q:            [num_tokens, num_heads * head_dim]    (one block per token), rows q_stride apart
// k, v:         [num_tokens, num_kv_heads * head_dim], rows kv_stride apart
// positions:    [num_tokens]
// slot_mapping: [num_tokens]
// inv_freq:     [rotary_dim / 2]
// k_cache, v_cache: [num_slots, num_kv_heads, head_dim], num_slots = num_blocks * block_size
template <typename T>
__global__ void rope_and_cache_kernel(T* __restrict__ q, T* __restrict__ k, const T* __restrict__ v,
                                      const int32_t* __restrict__ positions,
                                      const int64_t* __restrict__ slot_mapping,
                                      const float* __restrict__ inv_freq, bool interleaved,
                                      T* __restrict__ k_cache, T* __restrict__ v_cache,
                                      int num_heads, int num_kv_heads, int head_dim, int rotary_dim,
                                      int64_t q_stride, int64_t kv_stride, bool is_v_packed) {
  SLUICE_DYNAMIC_SHARED(float, trig);  // [rotary_dim]: cos of each pair, then sin of each pair
  const int64_t token = blockIdx.x;
  const int half = rotary_dim / 2;
  const int32_t position = positions[token];
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    float sin_value, cos_value;
    sincosf(reduced_angle(position, inv_freq[i]), &sin_value, &cos_value);
    trig[i] = cos_value;
    trig[half + i] = sin_value;
  }
  __syncthreads();

  const int64_t slot = slot_mapping[token];
  const int kv_dim = num_kv_heads * head_dim;

  T* q_row = q + token * q_stride;
  for (int work = threadIdx.x; work < num_heads * half; work += blockDim.x) {
    const int head = work / half;
    const int pair_idx = work % half;
    T first, second;
    rotate_pair(q_row + head * head_dim, pair_idx, half, interleaved, trig[pair_idx],
                trig[half + pair_idx], first, second);
  }

  T* k_row = k + token * kv_stride;
  T* k_cache_row = slot >= 0 && k_cache != nullptr ? k_cache + slot * kv_dim : nullptr;
  for (int work = threadIdx.x; work < num_kv_heads * half; work += blockDim.x) {
    const int head = work / half;
    const int pair_idx = work % half;
    T first, second;
    rotate_pair(k_row + head * head_dim, pair_idx, half, interleaved, trig[pair_idx],
                trig[half + pair_idx], first, second);
    if (k_cache_row != nullptr) {
      T* cache_head = k_cache_row + head * head_dim;
      cache_head[interleaved ? 2 * pair_idx : pair_idx] = first;
      cache_head[interleaved ? 2 * pair_idx + 1 : pair_idx + half] = second;
    }
  }

  if (k_cache_row == nullptr) return;
  // Partial rotary: k's unrotated dimensions go to the cache as they are.
  const int num_passed = head_dim - rotary_dim;
  for (int work = threadIdx.x; work < num_kv_heads * num_passed; work += blockDim.x) {
    const int dim = (work / num_passed) * head_dim + rotary_dim + work % num_passed;
    k_cache_row[dim] = k_row[dim];
  }

  const T* v_row = v + token * kv_stride;
  T* v_cache_row = v_cache + slot * kv_dim;
  if (is_v_packed) {
    using P = Pack<T>;
    for (int p = threadIdx.x; p < kv_dim / P::kSize; p += blockDim.x) {
      reinterpret_cast<P*>(v_cache_row)[p] = reinterpret_cast<const P*>(v_row)[p];
    }
  } else {
    for (int i = threadIdx.x; i < kv_dim; i += blockDim.x) v_cache_row[i] = v_row[i];
  }
}

}  // namespace

template <typename T>
KernelStatus rope_and_cache(T* q, T* k, const T* v, const int32_t* positions,
                            const int64_t* slot_mapping, const float* inv_freq, bool interleaved,
                            T* k_cache, T* v_cache, int num_tokens, int num_heads, int num_kv_heads,
                            int head_dim, int rotary_dim, int block_size, int64_t row_stride,
                            cudaStream_t stream) {
  // The cache offset of a slot does not need block_size (slot = block_id * block_size + offset
  // is already the row index of [num_blocks * block_size, ...]); it is validated only.
  if (num_tokens < 0 || num_heads <= 0 || num_kv_heads <= 0 || head_dim <= 0 || rotary_dim <= 0 ||
      rotary_dim > head_dim || rotary_dim % 2 != 0 || block_size <= 0) {
    return detail::invalid_argument();
  }
  const int kv_dim = num_kv_heads * head_dim;
  const int64_t q_dim = static_cast<int64_t>(num_heads) * head_dim;
  // A fused row holds q, then k, then v: the stride covers all three.
  if (row_stride != 0 && row_stride < q_dim + 2 * kv_dim) return detail::invalid_argument();
  if (num_tokens == 0) return kKernelOk;
  const int64_t q_stride = row_stride != 0 ? row_stride : q_dim;
  const int64_t kv_stride = row_stride != 0 ? row_stride : kv_dim;
  const bool is_v_packed = detail::is_aligned_16(v) && detail::is_aligned_16(v_cache) &&
                           kv_dim % Pack<T>::kSize == 0 && kv_stride % Pack<T>::kSize == 0;
  const int max_work = num_heads * (rotary_dim / 2);
  const int threads = max_work >= 256 ? 256 : 32 * ((max_work + 31) / 32);
  const size_t shared_bytes = sizeof(float) * static_cast<size_t>(rotary_dim);
  detail::launch_kernel(rope_and_cache_kernel<T>, num_tokens, threads, shared_bytes, stream, q, k,
                        v, positions, slot_mapping, inv_freq, interleaved, k_cache, v_cache,
                        num_heads, num_kv_heads, head_dim, rotary_dim, q_stride, kv_stride,
                        is_v_packed);
  return detail::launch_status();
}

#define SLUICE_INSTANTIATE_ROPE(T)                                                             \
  template KernelStatus rope_and_cache<T>(T*, T*, const T*, const int32_t*, const int64_t*,    \
                                          const float*, bool, T*, T*, int, int, int, int, int, \
                                          int, int64_t, cudaStream_t);
SLUICE_INSTANTIATE_ROPE(float)
SLUICE_INSTANTIATE_ROPE(__nv_bfloat16)
SLUICE_INSTANTIATE_ROPE(__half)
#undef SLUICE_INSTANTIATE_ROPE

}  // namespace sluice::kernels
