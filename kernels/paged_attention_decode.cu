// Decode pass of paged attention: requests whose query is one token, with split-KV over
// partitions of the context and a log-sum-exp merge of the partials (paged_attention_common.cuh
// has the overall design).
//
// Grid (num_requests, num_kv_heads * head tiles, max_num_partitions), 128 threads. A block
// takes one request, up to kGroupTile query heads of one KV head, and one partition of its
// context. A key row (head_dim contiguous elements) is read by a key group of
// next_pow2(head_dim / 8) lanes, 8 elements each, and scored against all the block's query
// heads: K and V are read once per block, not once per query head. Each key group keeps its own
// online softmax; key groups merge with shuffles, warps through shared memory. Partitions are
// 512 positions by default (planned in paged_attention.cu) and split the keys a token sees (its
// window, when the layer has one: no partition lies outside it); with one partition the block
// writes out directly, otherwise its partial (max, sum, unnormalised acc) goes to the workspace.
#include <type_traits>

#include "kernels/paged_attention_common.cuh"

namespace sluice::kernels::attention {

namespace {

constexpr int kDecodeThreads = 128;
constexpr int kDecodeWarps = kDecodeThreads / 32;
constexpr int kMergeThreads = 128;

// Lanes that read one key row: one 8-element chunk each, a power of two so key groups tile a
// warp (at most 32 since head_dim <= 256).
__host__ __device__ constexpr int lanes_per_key(int head_dim) {
  return next_pow2(head_dim / 8);
}

// Sum over the lanes of one key group (aligned groups of `width` lanes); every lane gets the
// same bits (a butterfly adds the same pairs in every lane).
template <int kWidth>
__device__ __forceinline__ float key_group_sum(float x, int width) {
  const int w = kWidth > 0 ? kWidth : width;
#pragma unroll
  for (int offset = (kWidth > 0 ? kWidth : 32) / 2; offset > 0; offset /= 2) {
    if (offset < w) x += __shfl_xor_sync(0xffffffffu, x, offset);
  }
  return x;
}

// kHasSoftcap: a compile-time switch, since the tanh path costs registers (and occupancy) even
// when a run-time flag skips it.
// C: the cache's elements; an FP8 cache's row scales multiply each key's score and each value's
// weight (a row's scale is common to all its elements).
template <typename T, typename C, int kHeadDim, int kHeadDimCap, int kGroupTile, bool kHasSoftcap>
__global__ void __launch_bounds__(kDecodeThreads)
    paged_attention_decode_kernel(const PagedAttentionArgs<T, C> args) {
  // Keys per key group per step: loads in flight per lane, fewer when registers are scarce.
  constexpr int kKeysPerStep = (kGroupTile >= 8 || sizeof(T) == 4) ? 2 : 4;
  constexpr int kLanesPerKey = kHeadDim > 0 ? lanes_per_key(kHeadDim) : 0;
  __shared__ float warp_acc[kDecodeWarps][kGroupTile][kHeadDimCap];  // per warp, unnormalised
  __shared__ float warp_max[kDecodeWarps][kGroupTile];
  __shared__ float warp_sum[kDecodeWarps][kGroupTile];

  const int request_idx = blockIdx.x;
  const int token = args.query_start_loc[request_idx];
  if (args.query_start_loc[request_idx + 1] - token != 1) return;  // a prefill chunk
  const int position = args.positions[token];
  const int first_key = token_first_key(position, args.sliding_window);
  const int context_len = token_context_len(position, args.seq_lens[request_idx]);

  // This block's partition of the visible keys [first_key, context_len): [key_begin, key_end);
  // the last launched partition takes the rest.
  int num_partitions = 1, key_begin = first_key, key_end = context_len;
  if (args.partition_size > 0) {
    num_partitions = num_decode_partitions(context_len - first_key, args);
    key_begin = first_key + blockIdx.z * args.partition_size;
    if (static_cast<int>(blockIdx.z) + 1 < num_partitions)
      key_end = key_begin + args.partition_size;
  }
  if (static_cast<int>(blockIdx.z) >= num_partitions) return;

  const int head_dim = kHeadDim > 0 ? kHeadDim : args.head_dim;
  const int key_lanes = kHeadDim > 0 ? kLanesPerKey : lanes_per_key(head_dim);
  const int group_size = args.num_heads / args.num_kv_heads;
  const int num_head_tiles = ceil_div(group_size, kGroupTile);
  const int kv_head = blockIdx.y / num_head_tiles;
  const int head_begin = kv_head * group_size + (blockIdx.y % num_head_tiles) * kGroupTile;
  const int num_block_heads = min(kGroupTile, (kv_head + 1) * group_size - head_begin);

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int lane_in_key = lane & (key_lanes - 1);
  const int key_slot = lane / key_lanes;  // which key group of the warp
  const int keys_per_warp_step = (32 / key_lanes) * kKeysPerStep;
  const bool has_chunk = lane_in_key * 8 < head_dim;  // lanes past head_dim/8 hold zeros

  // This lane's 8 elements of each query head, pre-scaled into the log2 domain.
  float q[kGroupTile][8];
  const T* q_token = args.q + static_cast<int64_t>(token) * args.q_row_stride;
#pragma unroll
  for (int g = 0; g < kGroupTile; ++g) {
#pragma unroll
    for (int e = 0; e < 8; ++e) q[g][e] = 0.0f;
    if (g < num_block_heads && has_chunk) {
      unpack8(load_pack8(q_token + (head_begin + g) * head_dim + lane_in_key * 8), q[g]);
#pragma unroll
      for (int e = 0; e < 8; ++e) q[g][e] *= args.q_scale;
    }
  }

  // Online softmax of this key group over its keys.
  float row_max[kGroupTile], row_sum[kGroupTile], acc[kGroupTile][8];
#pragma unroll
  for (int g = 0; g < kGroupTile; ++g) {
    row_max[g] = -INFINITY;
    row_sum[g] = 0.0f;
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[g][e] = 0.0f;
  }

  const int32_t* block_table =
      args.block_tables + static_cast<int64_t>(request_idx) * args.max_blocks_per_request;
  const int64_t slot_stride = static_cast<int64_t>(args.num_kv_heads) * head_dim;
  const int64_t head_offset = static_cast<int64_t>(kv_head) * head_dim + lane_in_key * 8;

  // The trip count is uniform per warp (shuffles below need the whole warp); keys past
  // key_end are masked per key group.
  for (int step = key_begin + warp * keys_per_warp_step; step < key_end;
       step += kDecodeWarps * keys_per_warp_step) {
    const int group_key = step + key_slot * kKeysPerStep;
    Pack8<C> k_pack[kKeysPerStep], v_pack[kKeysPerStep];
    float k_scale[kKeysPerStep], v_scale[kKeysPerStep];  // FP8 only
#pragma unroll
    for (int u = 0; u < kKeysPerStep; ++u) {
      k_pack[u] = Pack8<C>{};
      v_pack[u] = Pack8<C>{};
      k_scale[u] = v_scale[u] = 0.0f;
      const int key = group_key + u;
      if (key < key_end && has_chunk) {
        const int64_t slot =
            static_cast<int64_t>(block_table[key / args.block_size]) * args.block_size +
            key % args.block_size;
        k_pack[u] = load_pack8(args.k_cache + slot * slot_stride + head_offset);
        v_pack[u] = load_pack8(args.v_cache + slot * slot_stride + head_offset);
        if constexpr (kIsFp8Cache<C>) {
          k_scale[u] = args.k_scales[slot * args.num_kv_heads + kv_head];
          v_scale[u] = args.v_scales[slot * args.num_kv_heads + kv_head];
        }
      }
    }

    float score[kKeysPerStep][kGroupTile];
#pragma unroll
    for (int u = 0; u < kKeysPerStep; ++u) {
      float k[8];
      unpack8(k_pack[u], k);
#pragma unroll
      for (int g = 0; g < kGroupTile; ++g) {
        float s = 0.0f;
#pragma unroll
        for (int e = 0; e < 8; ++e) s = fmaf(q[g][e], k[e], s);
        s = key_group_sum<kLanesPerKey>(s, key_lanes);
        if constexpr (kIsFp8Cache<C>) s *= k_scale[u];
        if constexpr (kHasSoftcap) s = softcapped_log2_score(s, args);
        score[u][g] = group_key + u < key_end ? s : -INFINITY;
      }
    }

#pragma unroll
    for (int g = 0; g < kGroupTile; ++g) {
      float step_max = score[0][g];
#pragma unroll
      for (int u = 1; u < kKeysPerStep; ++u) step_max = fmaxf(step_max, score[u][g]);
      const float new_max = fmaxf(row_max[g], step_max);
      const float correction = exp2_shifted(row_max[g], new_max);
      row_max[g] = new_max;
      row_sum[g] *= correction;
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[g][e] *= correction;
#pragma unroll
      for (int u = 0; u < kKeysPerStep; ++u) {
        score[u][g] = exp2_shifted(score[u][g], new_max);  // now the weight p
        row_sum[g] += score[u][g];
      }
    }
#pragma unroll
    for (int u = 0; u < kKeysPerStep; ++u) {
      float v[8];
      unpack8(v_pack[u], v);
#pragma unroll
      for (int g = 0; g < kGroupTile; ++g) {
        const float weight = kIsFp8Cache<C> ? score[u][g] * v_scale[u] : score[u][g];
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[g][e] = fmaf(weight, v[e], acc[g][e]);
      }
    }
  }

  // Merge the key groups of the warp: lanes with the same lane_in_key, offsets >= key_lanes.
  for (int offset = key_lanes; offset < 32; offset *= 2) {
#pragma unroll
    for (int g = 0; g < kGroupTile; ++g) {
      const float other_max = __shfl_xor_sync(0xffffffffu, row_max[g], offset);
      const float other_sum = __shfl_xor_sync(0xffffffffu, row_sum[g], offset);
      const float new_max = fmaxf(row_max[g], other_max);
      const float mine = exp2_shifted(row_max[g], new_max);
      const float theirs = exp2_shifted(other_max, new_max);
      row_max[g] = new_max;
      row_sum[g] = row_sum[g] * mine + other_sum * theirs;
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const float other_acc = __shfl_xor_sync(0xffffffffu, acc[g][e], offset);
        acc[g][e] = acc[g][e] * mine + other_acc * theirs;
      }
    }
  }
  if (key_slot == 0) {
#pragma unroll
    for (int g = 0; g < kGroupTile; ++g) {
      if (has_chunk) {
#pragma unroll
        for (int e = 0; e < 8; ++e) warp_acc[warp][g][lane_in_key * 8 + e] = acc[g][e];
      }
      if (lane_in_key == 0) {
        warp_max[warp][g] = row_max[g];
        warp_sum[warp][g] = row_sum[g];
      }
    }
  }
  __syncthreads();

  // Merge the warps; write the output (one partition) or this partition's partial.
  for (int idx = threadIdx.x; idx < num_block_heads * head_dim; idx += kDecodeThreads) {
    const int g = idx / head_dim;
    const int d = idx - g * head_dim;
    float block_max = -INFINITY;
#pragma unroll
    for (int w = 0; w < kDecodeWarps; ++w) block_max = fmaxf(block_max, warp_max[w][g]);
    float block_sum = 0.0f, block_acc = 0.0f;
#pragma unroll
    for (int w = 0; w < kDecodeWarps; ++w) {
      const float weight = exp2_shifted(warp_max[w][g], block_max);
      block_sum += weight * warp_sum[w][g];
      block_acc += weight * warp_acc[w][g][d];
    }
    const int head = head_begin + g;
    if (num_partitions == 1) {
      const float value =
          block_sum > 0.0f ? block_acc / (block_sum + sink_weight(args, head, block_max)) : 0.0f;
      args.out[(static_cast<int64_t>(token) * args.num_heads + head) * head_dim + d] =
          from_float<T>(value);
    } else {
      const int64_t partial =
          (static_cast<int64_t>(request_idx) * args.num_heads + head) * args.max_num_partitions +
          blockIdx.z;
      args.partial_acc[partial * head_dim + d] = block_acc;
      if (d == 0) {
        args.partial_max[partial] = block_max;
        args.partial_sum[partial] = block_sum;
      }
    }
  }
}

// Combines the partitions of one (decode request, query head): out = sum_p 2^(m_p - M) acc_p /
// sum_p 2^(m_p - M) sum_p. Grid (num_requests, num_heads); dynamic shared memory holds one
// weight per launched partition.
template <typename T, typename C>
__global__ void __launch_bounds__(kMergeThreads)
    paged_attention_merge_kernel(const PagedAttentionArgs<T, C> args) {
  SLUICE_DYNAMIC_SHARED(float, partition_weight);  // [max_num_partitions]
  const int request_idx = blockIdx.x;
  const int head = blockIdx.y;
  const int token = args.query_start_loc[request_idx];
  if (args.query_start_loc[request_idx + 1] - token != 1) return;
  const int position = args.positions[token];
  const int context_len = token_context_len(position, args.seq_lens[request_idx]);
  const int num_partitions =
      num_decode_partitions(context_len - token_first_key(position, args.sliding_window), args);
  if (num_partitions == 1) return;  // the decode kernel wrote the output itself

  const int64_t first =
      (static_cast<int64_t>(request_idx) * args.num_heads + head) * args.max_num_partitions;
  // Every launched partition holds at least one key, so every partial max is finite.
  float global_max = -INFINITY;
  for (int p = 0; p < num_partitions; ++p)
    global_max = fmaxf(global_max, args.partial_max[first + p]);
  for (int p = threadIdx.x; p < num_partitions; p += kMergeThreads)
    partition_weight[p] = exp2f(args.partial_max[first + p] - global_max);
  __syncthreads();
  float total = 0.0f;
  for (int p = 0; p < num_partitions; ++p)
    total += partition_weight[p] * args.partial_sum[first + p];
  total += sink_weight(args, head, global_max);  // once, not per partition
  const float inv_total = total > 0.0f ? 1.0f / total : 0.0f;

  const int head_dim = args.head_dim;
  T* out = args.out + (static_cast<int64_t>(token) * args.num_heads + head) * head_dim;
  for (int d = threadIdx.x; d < head_dim; d += kMergeThreads) {
    float value = 0.0f;
    for (int p = 0; p < num_partitions; ++p)
      value += partition_weight[p] * args.partial_acc[(first + p) * head_dim + d];
    out[d] = from_float<T>(value * inv_total);
  }
}

// Query heads per decode block: the group size rounded up to 1, 2, 4 or 8; larger groups take
// several blocks per KV head.
template <typename F>
cudaError_t dispatch_group_tile(int group_size, F&& f) {
  if (group_size <= 1) return f(std::integral_constant<int, 1>{});
  if (group_size <= 2) return f(std::integral_constant<int, 2>{});
  if (group_size <= 4) return f(std::integral_constant<int, 4>{});
  return f(std::integral_constant<int, 8>{});
}

}  // namespace

template <typename T, typename C>
cudaError_t launch_paged_attention_decode(const PagedAttentionArgs<T, C>& args,
                                          cudaStream_t stream) {
  const int group_size = args.num_heads / args.num_kv_heads;
  const cudaError_t status = dispatch_head_dim(args.head_dim, [&](auto head_dim_tag) {
    using HeadDim = decltype(head_dim_tag);
    return dispatch_group_tile(group_size, [&](auto group_tile) {
      constexpr int kGroupTile = decltype(group_tile)::value;
      const dim3 grid(args.num_requests, args.num_kv_heads * ceil_div(group_size, kGroupTile),
                      max(args.max_num_partitions, 1));
      const auto kernel =
          args.softcap_log2 > 0.0f
              ? paged_attention_decode_kernel<T, C, HeadDim::kHeadDim, HeadDim::kHeadDimCap,
                                              kGroupTile, true>
              : paged_attention_decode_kernel<T, C, HeadDim::kHeadDim, HeadDim::kHeadDimCap,
                                              kGroupTile, false>;
      detail::launch_kernel(kernel, grid, kDecodeThreads, 0, stream, args);
      return cudaGetLastError();
    });
  });
  if (status != cudaSuccess || args.partition_size <= 0 || args.max_num_partitions <= 1)
    return status;
  const dim3 merge_grid(args.num_requests, args.num_heads);
  detail::launch_kernel(paged_attention_merge_kernel<T, C>, merge_grid, kMergeThreads,
                        merge_shared_bytes(args.max_num_partitions), stream, args);
  return cudaGetLastError();
}

#define SLUICE_INSTANTIATE_DECODE(T, C)                                                          \
  template cudaError_t launch_paged_attention_decode<T, C>(const PagedAttentionArgs<T, C>& args, \
                                                           cudaStream_t stream);
SLUICE_PAGED_ATTENTION_FOR_EACH_CACHE(SLUICE_INSTANTIATE_DECODE)
#undef SLUICE_INSTANTIATE_DECODE

}  // namespace sluice::kernels::attention
