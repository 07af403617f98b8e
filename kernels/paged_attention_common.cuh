// Shared pieces of the paged-attention kernels (device code: include from .cu files only).
//
// Design. A forward step mixes decode requests (query length 1) and prefill chunks (query
// length > 1, possibly starting mid-context after chunked prefill or a prefix-cache hit).
// - Decode: one thread block per (request, KV head, up to 8 of its query heads, KV partition).
//   Each key row is read once by a "key group" of lanes (8 elements per lane, vectorised) and
//   scored against all of the block's query heads; every key group keeps its own online softmax
//   (max, sum, accumulator in float), merged across the warp with shuffles and across warps in
//   shared memory. Long contexts are split into partitions whose partial (max, sum, acc) go to
//   the workspace and are combined by a merge kernel (log-sum-exp merge).
// - Prefill: FlashAttention-style tiles of query rows x keys on CUDA cores. A query row is one
//   (token, query head) pair of one KV head's group, so K/V tiles gathered into shared memory
//   through the block table serve all query heads of the group. Online softmax in float; the
//   causal mask compares key positions with each row's absolute position.
// Scores are kept in the log2 domain (q is pre-scaled by scale * log2(e)) so that every
// exponential is one exp2f; with a logit soft-cap q is pre-scaled by scale only and the score
// becomes cap * log2(e) * tanh(s / cap). A sliding window narrows each query's keys to its
// window: decode partitions split the window, not the context, and prefill key tiles start at
// the tile's earliest visible key, so blocks outside every window are never read.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "engine/core/fp8_e4m3.h"
#include "kernels/dtype_traits.cuh"
#include "kernels/kv_cache_fp8.cuh"
#include "kernels/paged_attention.cuh"

// The element types every paged-attention kernel is instantiated for (the one place they are
// listed): X(float) X(__half) X(__nv_bfloat16).
#define SLUICE_PAGED_ATTENTION_FOR_EACH_DTYPE(X) X(float) X(__half) X(__nv_bfloat16)
// The (activation type, cache element type) pairs: each type's own cache, and FP8 codes.
#define SLUICE_PAGED_ATTENTION_FOR_EACH_CACHE(X) \
  X(float, float)                                \
  X(__half, __half)                              \
  X(__nv_bfloat16, __nv_bfloat16) X(float, Fp8E4M3) X(__half, Fp8E4M3) X(__nv_bfloat16, Fp8E4M3)

namespace sluice::kernels::attention {

using detail::from_float;

inline constexpr int kMaxHeadDim = 256;
inline constexpr float kLog2e = 1.4426950408889634f;

__host__ __device__ constexpr int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

// Smallest power of two >= n (n >= 1).
__host__ __device__ constexpr int next_pow2(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

// True for the FP8 cache, whose rows carry a scale (engine/core/fp8_e4m3.h).
template <typename C>
inline constexpr bool kIsFp8Cache = std::is_same_v<C, Fp8E4M3>;

// Everything a kernel reads, by value (a kernel parameter). Shapes as in paged_attention.cuh.
// T: q and out; C: the cache's elements (T, or Fp8E4M3 codes with a scale per slot and KV head).
template <typename T, typename C = T>
struct PagedAttentionArgs {
  const T* q;  // [num_tokens, num_heads * head_dim], rows q_row_stride apart
  int64_t q_row_stride;
  const C* k_cache;                // [num_blocks, block_size, num_kv_heads, head_dim]
  const C* v_cache;                // [num_blocks, block_size, num_kv_heads, head_dim]
  const float* k_scales;           // FP8 only: [num_blocks, block_size, num_kv_heads]
  const float* v_scales;           // FP8 only: same
  const int32_t* block_tables;     // [num_requests, max_blocks_per_request]
  const int32_t* query_start_loc;  // [num_requests + 1]
  const int32_t* seq_lens;         // [num_requests]
  const int32_t* positions;        // [num_tokens]
  T* out;                          // [num_tokens, num_heads * head_dim]
  int num_requests;
  int num_heads;
  int num_kv_heads;
  int head_dim;
  int block_size;
  int max_blocks_per_request;
  float q_scale;       // applied to q: scale * log2(e), or scale alone with a soft-cap
  float softcap_log2;  // cap * log2(e) with a soft-cap, 0 without
  float inv_softcap;   // 1 / cap
  int sliding_window;  // 0: causal over the whole context
  // Split-KV decode. partition_size <= 0: one pass over the whole context.
  int partition_size;
  int max_num_partitions;  // partitions launched per request (the last one takes the rest)
  float* partial_acc;      // [num_requests, num_heads, max_num_partitions, head_dim]
  float* partial_max;      // [num_requests, num_heads, max_num_partitions] log2 domain
  float* partial_sum;      // [num_requests, num_heads, max_num_partitions]
  bool is_decode_tiled;    // the tiled kernel also runs requests of query length 1
  const float* sinks;      // [num_heads] natural-log sink logits, or null
};

// Dynamic shared memory of the split-KV merge: one float weight per partition, rounded up to
// whole 16-byte groups. The merge's unrolled reads of the weights may become vector loads that
// run past the last weight (compute-sanitizer memcheck on an H200 caught a 12-byte shared read
// at the end of the array in paged_attention_merge_kernel<float>); the rounding keeps every
// such load inside the allocation.
__host__ __device__ constexpr size_t merge_shared_bytes(int max_num_partitions) {
  return static_cast<size_t>(ceil_div(max_num_partitions, 4)) * 4 * sizeof(float);
}

// Positions 0..context_len-1 of a token's request are visible to it: its own position and all
// before it, never past what the request has in the cache.
__device__ __forceinline__ int token_context_len(int position, int seq_len) {
  return min(position + 1, seq_len);
}

// The first position a token sees: 0, or the start of its window.
__device__ __forceinline__ int token_first_key(int position, int sliding_window) {
  return sliding_window > 0 ? max(0, position - sliding_window + 1) : 0;
}

// A score from q (pre-scaled by q_scale) . k into the log2 domain when the soft-cap is on
// (without one the score is in it already).
template <typename Args>
__device__ __forceinline__ float softcapped_log2_score(float s, const Args& args) {
  return args.softcap_log2 * tanhf(s * args.inv_softcap);
}

// Split-KV partitions of a decode token's num_keys visible keys (at least 1).
template <typename Args>
__device__ __forceinline__ int num_decode_partitions(int num_keys, const Args& args) {
  return min(max(ceil_div(num_keys, args.partition_size), 1), args.max_num_partitions);
}

// ---- element types ------------------------------------------------------------------------

// Eight consecutive elements of T loaded in one go (16 bytes for 16-bit types, 32 for float).
template <typename T>
struct Pack8 {
  uint4 bits;
};
template <>
struct Pack8<float> {
  float4 lo, hi;
};
template <>
struct Pack8<Fp8E4M3> {
  uint2 bits;
};

// p: 8 elements, 16-byte aligned.
template <typename T>
__device__ __forceinline__ Pack8<T> load_pack8(const T* p) {
  return Pack8<T>{*reinterpret_cast<const uint4*>(p)};
}
template <>
__device__ __forceinline__ Pack8<float> load_pack8<float>(const float* p) {
  const float4* v = reinterpret_cast<const float4*>(p);
  return Pack8<float>{v[0], v[1]};
}
// FP8 codes: 8 bytes, 8-byte aligned.
template <>
__device__ __forceinline__ Pack8<Fp8E4M3> load_pack8<Fp8E4M3>(const Fp8E4M3* p) {
  return Pack8<Fp8E4M3>{*reinterpret_cast<const uint2*>(p)};
}

__device__ __forceinline__ void unpack8(const Pack8<float>& pack, float (&out)[8]) {
  out[0] = pack.lo.x, out[1] = pack.lo.y, out[2] = pack.lo.z, out[3] = pack.lo.w;
  out[4] = pack.hi.x, out[5] = pack.hi.y, out[6] = pack.hi.z, out[7] = pack.hi.w;
}
// FP8 codes decode to their unscaled values; the kernels apply the row's scale.
__device__ __forceinline__ void unpack8(const Pack8<Fp8E4M3>& pack, float (&out)[8]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[i] = fp8_e4m3_to_float(static_cast<uint8_t>(pack.bits.x >> (8 * i)));
    out[4 + i] = fp8_e4m3_to_float(static_cast<uint8_t>(pack.bits.y >> (8 * i)));
  }
}
// The 16-bit packs are unpacked from their 32-bit words (no pointer casts between a local uint4
// and __half2: that breaks strict aliasing). A bf16 is the high half of a float's bits.
__device__ __forceinline__ float2 half2_bits_to_float2(uint32_t bits) {
  __half2 h;
  memcpy(&h, &bits, sizeof h);
  return __half22float2(h);
}
__device__ __forceinline__ float2 bfloat162_bits_to_float2(uint32_t bits) {
  return make_float2(__uint_as_float(bits << 16), __uint_as_float(bits & 0xffff0000u));
}
template <typename T>
__device__ __forceinline__ void unpack8(const Pack8<T>& pack, float (&out)[8]) {
  const uint32_t words[4] = {pack.bits.x, pack.bits.y, pack.bits.z, pack.bits.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 f;
    if constexpr (std::is_same_v<T, __half>) {
      f = half2_bits_to_float2(words[i]);
    } else {
      f = bfloat162_bits_to_float2(words[i]);
    }
    out[2 * i] = f.x, out[2 * i + 1] = f.y;
  }
}

// p: 4 elements, aligned to 4 elements.
__device__ __forceinline__ void store4(float* p, float4 v) {
  *reinterpret_cast<float4*>(p) = v;
}
__device__ __forceinline__ void store4(__half* p, float4 v) {
  const __half2 h[2] = {__floats2half2_rn(v.x, v.y), __floats2half2_rn(v.z, v.w)};
  uint2 bits;
  memcpy(&bits, h, sizeof bits);
  *reinterpret_cast<uint2*>(p) = bits;
}
__device__ __forceinline__ void store4(__nv_bfloat16* p, float4 v) {
  const __nv_bfloat162 h[2] = {__floats2bfloat162_rn(v.x, v.y), __floats2bfloat162_rn(v.z, v.w)};
  uint2 bits;
  memcpy(&bits, h, sizeof bits);
  *reinterpret_cast<uint2*>(p) = bits;
}

// ---- softmax helpers ------------------------------------------------------------------------

// 2^(x - max) for a running max that may still be -inf (nothing seen yet): 0 then, never NaN.
__device__ __forceinline__ float exp2_shifted(float x, float max) {
  return x == -INFINITY ? 0.0f : exp2f(x - max);
}

// What a head's attention sink adds to the softmax denominator of a row whose scores (log2
// domain) have max row_max and sum sum_j 2^(s_j - row_max): 2^(sink * log2(e) - row_max), or 0
// without sinks. The output is acc / (sum + this): the sink takes probability, gives no value. A
// sink far above every score overflows to +inf, and the output to 0, its limit.
template <typename Args>
__device__ __forceinline__ float sink_weight(const Args& args, int head, float row_max) {
  return args.sinks ? exp2f(args.sinks[head] * kLog2e - row_max) : 0.0f;
}

// ---- host-side dispatch ---------------------------------------------------------------------

// A head dim as template constants: kHeadDim > 0 is exact; kHeadDim == 0 reads it at run time,
// and kHeadDimCap bounds it (register and shared-memory sizes).
template <int kHeadDim_, int kHeadDimCap_>
struct HeadDimTag {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kHeadDimCap = kHeadDimCap_;
};

// The one place runtime head dims become compile-time constants: 64, 80, 96, 128 and 256 have
// tuned instantiations; any other multiple of 8 up to 256 runs the generic body.
// Precondition: head_dim is a multiple of 8 in [8, 256].
template <typename F>
cudaError_t dispatch_head_dim(int head_dim, F&& f) {
  switch (head_dim) {
    case 64:
      return f(HeadDimTag<64, 64>{});
    case 80:
      return f(HeadDimTag<80, 80>{});
    case 96:
      return f(HeadDimTag<96, 96>{});
    case 128:
      return f(HeadDimTag<128, 128>{});
    case 256:
      return f(HeadDimTag<256, 256>{});
    default:
      return head_dim <= 128 ? f(HeadDimTag<0, 128>{}) : f(HeadDimTag<0, kMaxHeadDim>{});
  }
}

// Launchers of the two passes (paged_attention_decode.cu, paged_attention_prefill.cu); each
// checks its launches and returns the first error. Preconditions checked by paged_attention.
template <typename T, typename C>
cudaError_t launch_paged_attention_decode(const PagedAttentionArgs<T, C>& args,
                                          cudaStream_t stream);
template <typename T, typename C>
cudaError_t launch_paged_attention_prefill(const PagedAttentionArgs<T, C>& args, int num_tokens,
                                           cudaStream_t stream);

}  // namespace sluice::kernels::attention
