// Tiled (FlashAttention-style) pass of paged attention for prefill chunks, on CUDA cores
// (paged_attention_common.cuh has the overall design).
//
// A query row is one (token, query head) pair of one KV head's group: row = token_in_request *
// group_size + head_in_group, so a tile of kRows rows shares every K/V tile it loads across all
// query heads of the group. Grid (tile slots, num_kv_heads), 128 threads. Request r owns the
// slots [slot_begin(r), slot_begin(r + 1)) with slot_begin(r) = floor(query_start_loc[r] *
// group_size / kRows) + r, which is at least ceil(query_len * group_size / kRows) slots (the
// block finds its request by binary search; spare slots exit at once). Total slots:
// floor(num_tokens * group_size / kRows) + num_requests.
//
// Key tiles of kKeys positions run from the earliest key any of the block's rows sees (0, or the
// start of the earliest window) to the furthest. Per tile: gather K through the block table into
// shared memory (as float), S = Q K^T for the thread's rows x keys, soft-cap, mask keys outside
// each row's window or past its position, online softmax, P to shared memory, gather V into the
// same buffer, O += P V in registers.
// Threads: 16 row groups x 8 key lanes; a row group's 8 lanes are adjacent, so row max and sum
// are three xor shuffles. Shared memory (floats):
//   q_tile  [kRows, head_dim + 4]   pre-scaled Q (log2 domain)
//   kv_tile [kKeys, head_dim + 4]   K, then V, of the current key tile
//   p_tile  [kRows, kKeys + 8]      softmax weights of the current key tile
// The +4 row padding makes 8 lanes reading 8 rows at one column hit 8 different bank groups.
// Tiles: 64 rows x 32 keys for head_dim <= 128 (60 KiB of shared memory at 128: the kernel opts
// in above 48 KiB), 32 x 16 above 128 (52 KiB at 256).
#include <climits>
#include <cstddef>

#include "kernels/paged_attention_common.cuh"

namespace sluice::kernels::attention {

namespace {

constexpr int kPrefillThreads = 128;
constexpr int kKeyLanes = 8;
constexpr int kRowGroups = kPrefillThreads / kKeyLanes;

template <int kHeadDimCap>
struct PrefillTile {
  static constexpr int kRows = kHeadDimCap <= 128 ? 64 : 32;
  static constexpr int kKeys = kHeadDimCap <= 128 ? 32 : 16;
  static constexpr int kRowsPerThread = kRows / kRowGroups;
  static constexpr int kKeysPerThread = kKeys / kKeyLanes;
  static constexpr int kPStride = kKeys + 8;  // floats per p_tile row; +8 spreads 4 rows over banks
  // float4 columns of an output row owned by one lane: columns key_lane + 8 * c.
  static constexpr int kColumnsPerThread = ceil_div(kHeadDimCap / 4, kKeyLanes);
  // 8-element chunks of a K/V tile each thread gathers.
  static constexpr int kLoadsPerThread = ceil_div(kKeys * (kHeadDimCap / 8), kPrefillThreads);

  static size_t smem_bytes(int head_dim) {
    return sizeof(float) * (static_cast<size_t>(kRows + kKeys) * (head_dim + 4) +
                            static_cast<size_t>(kRows) * kPStride) +
           2 * sizeof(int) * kRows;
  }
};

__device__ __forceinline__ int tile_slot_begin(int token_begin, int request_idx, int group_size,
                                               int rows_per_tile) {
  return static_cast<int>(static_cast<int64_t>(token_begin) * group_size / rows_per_tile) +
         request_idx;
}

__device__ __forceinline__ void store8(float* dst, const float (&v)[8]) {
  float4* d = reinterpret_cast<float4*>(dst);
  d[0] = make_float4(v[0], v[1], v[2], v[3]);
  d[1] = make_float4(v[4], v[5], v[6], v[7]);
}

// Gathers keys [key_begin, key_begin + kKeys) of one KV head from the paged cache into
// tile[kKeys, stride] as float (an FP8 cache's codes decoded and scaled by their row's scale from
// scales); keys at or past key_end are zero (never read from the cache).
template <typename T, typename C, int kHeadDim, int kHeadDimCap>
__device__ __forceinline__ void gather_kv_tile(const C* cache, const float* scales,
                                               const PagedAttentionArgs<T, C>& args,
                                               const int32_t* block_table, int kv_head,
                                               int head_dim, int stride, int key_begin, int key_end,
                                               float* tile) {
  using Tile = PrefillTile<kHeadDimCap>;
  const int chunks_per_row = head_dim / 8;
  const int num_chunks = Tile::kKeys * chunks_per_row;
  const int64_t slot_stride = static_cast<int64_t>(args.num_kv_heads) * head_dim;
  Pack8<C> packs[Tile::kLoadsPerThread];
  float row_scales[Tile::kLoadsPerThread];  // FP8 only
#pragma unroll
  for (int n = 0; n < Tile::kLoadsPerThread; ++n) {  // all loads first: they are in flight together
    packs[n] = Pack8<C>{};
    row_scales[n] = 0.0f;
    const int chunk = threadIdx.x + n * kPrefillThreads;
    const int key = chunk / chunks_per_row;
    const int position = key_begin + key;
    if (chunk < num_chunks && position < key_end) {
      const int64_t slot =
          static_cast<int64_t>(block_table[position / args.block_size]) * args.block_size +
          position % args.block_size;
      packs[n] = load_pack8(cache + slot * slot_stride + kv_head * head_dim +
                            (chunk - key * chunks_per_row) * 8);
      if constexpr (kIsFp8Cache<C>) row_scales[n] = scales[slot * args.num_kv_heads + kv_head];
    }
  }
#pragma unroll
  for (int n = 0; n < Tile::kLoadsPerThread; ++n) {
    const int chunk = threadIdx.x + n * kPrefillThreads;
    if (chunk < num_chunks) {
      const int key = chunk / chunks_per_row;
      float v[8];
      unpack8(packs[n], v);
      if constexpr (kIsFp8Cache<C>) {
#pragma unroll
        for (int e = 0; e < 8; ++e) v[e] *= row_scales[n];
      }
      store8(tile + key * stride + (chunk - key * chunks_per_row) * 8, v);
    }
  }
}

template <typename T, typename C, int kHeadDim, int kHeadDimCap>
__global__ void __launch_bounds__(kPrefillThreads)
    paged_attention_prefill_kernel(const PagedAttentionArgs<T, C> args) {
  using Tile = PrefillTile<kHeadDimCap>;
  constexpr int kRows = Tile::kRows;
  constexpr int kKeys = Tile::kKeys;
  constexpr int kRowsPerThread = Tile::kRowsPerThread;
  constexpr int kKeysPerThread = Tile::kKeysPerThread;
  constexpr int kColumns = Tile::kColumnsPerThread;
  // Every lane owns kColumns real columns (no bounds check in the P V loop).
  constexpr bool kIsEveryColumnOwned = kHeadDim > 0 && (kHeadDim / 4) % kKeyLanes == 0;
  SLUICE_DYNAMIC_SHARED(float4, prefill_smem);

  // Which request and which rows of it this block takes.
  const int group_size = args.num_heads / args.num_kv_heads;
  const int slot = blockIdx.x;
  int request_idx = 0;  // the last request whose slots start at or before this one
  for (int hi = args.num_requests - 1; request_idx < hi;) {
    const int mid = (request_idx + hi + 1) / 2;
    if (tile_slot_begin(args.query_start_loc[mid], mid, group_size, kRows) <= slot) {
      request_idx = mid;
    } else {
      hi = mid - 1;
    }
  }
  const int token_begin = args.query_start_loc[request_idx];
  const int query_len = args.query_start_loc[request_idx + 1] - token_begin;
  if (query_len == 1 && !args.is_decode_tiled) return;  // the decode kernel takes it
  const int num_rows = query_len * group_size;
  const int row_begin =
      (slot - tile_slot_begin(token_begin, request_idx, group_size, kRows)) * kRows;
  if (row_begin >= num_rows) return;  // a spare slot
  const int kv_head = blockIdx.y;
  const int seq_len = args.seq_lens[request_idx];

  const int head_dim = kHeadDim > 0 ? kHeadDim : args.head_dim;
  const int stride = head_dim + 4;  // floats per q_tile / kv_tile row
  const int stride4 = stride / 4;
  const int columns4 = head_dim / 4;
  float* q_tile = reinterpret_cast<float*>(prefill_smem);                      // [kRows, stride]
  float* kv_tile = q_tile + kRows * stride;                                    // [kKeys, stride]
  float* p_tile = kv_tile + kKeys * stride;                                    // [kRows, kPStride]
  int* row_context = reinterpret_cast<int*>(p_tile + kRows * Tile::kPStride);  // [kRows]
  int* row_first_key = row_context + kRows;                                    // [kRows]
  const float4* q_tile4 = reinterpret_cast<const float4*>(q_tile);
  const float4* kv_tile4 = reinterpret_cast<const float4*>(kv_tile);
  const float4* p_tile4 = reinterpret_cast<const float4*>(p_tile);

  // Each row's visible keys [row_first_key, row_context) (none for rows past the chunk: fully
  // masked, never written).
  for (int i = threadIdx.x; i < kRows; i += kPrefillThreads) {
    const int row = row_begin + i;
    if (row < num_rows) {
      const int position = args.positions[token_begin + row / group_size];
      row_context[i] = token_context_len(position, seq_len);
      row_first_key[i] = token_first_key(position, args.sliding_window);
    } else {
      row_context[i] = 0;
      row_first_key[i] = INT_MAX;
    }
  }
  // Q rows, pre-scaled into the log2 domain.
  const int chunks_per_row = head_dim / 8;
  for (int chunk = threadIdx.x; chunk < kRows * chunks_per_row; chunk += kPrefillThreads) {
    const int i = chunk / chunks_per_row;
    const int column = (chunk - i * chunks_per_row) * 8;
    const int row = row_begin + i;
    float v[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    if (row < num_rows) {
      const int token = token_begin + row / group_size;
      const int head = kv_head * group_size + row % group_size;
      unpack8(load_pack8(args.q + static_cast<int64_t>(token) * args.q_row_stride +
                         static_cast<int64_t>(head) * head_dim + column),
              v);
#pragma unroll
      for (int e = 0; e < 8; ++e) v[e] *= args.q_scale;
    }
    store8(q_tile + i * stride + column, v);
  }
  __syncthreads();

  const int key_lane = threadIdx.x % kKeyLanes;
  const int row_group = threadIdx.x / kKeyLanes;
  // Thread rows: row_group + kRowGroups * i; thread keys: key_lane + kKeyLanes * j.
  int context[kRowsPerThread], first_key[kRowsPerThread];
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    context[i] = row_context[row_group + kRowGroups * i];
    first_key[i] = row_first_key[row_group + kRowGroups * i];
  }
  // Keys before min_first_key are outside every row's window: their blocks are never read.
  int max_context = 0, min_first_key = INT_MAX;
  for (int i = 0; i < kRows; ++i) {
    max_context = max(max_context, row_context[i]);
    min_first_key = min(min_first_key, row_first_key[i]);
  }

  float row_max[kRowsPerThread], row_sum[kRowsPerThread];  // row_sum: this lane's keys only
  float4 acc[kRowsPerThread][kColumns];
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    row_max[i] = -INFINITY;
    row_sum[i] = 0.0f;
#pragma unroll
    for (int c = 0; c < kColumns; ++c) acc[i][c] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }

  const int32_t* block_table =
      args.block_tables + static_cast<int64_t>(request_idx) * args.max_blocks_per_request;
  for (int key_begin = min_first_key; key_begin < max_context; key_begin += kKeys) {
    gather_kv_tile<T, C, kHeadDim, kHeadDimCap>(args.k_cache, args.k_scales, args, block_table,
                                                kv_head, head_dim, stride, key_begin, max_context,
                                                kv_tile);
    __syncthreads();

    float score[kRowsPerThread][kKeysPerThread];
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
#pragma unroll
      for (int j = 0; j < kKeysPerThread; ++j) score[i][j] = 0.0f;
    }
#pragma unroll 4
    for (int d4 = 0; d4 < columns4; ++d4) {
      float4 qv[kRowsPerThread], kv[kKeysPerThread];
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i)
        qv[i] = q_tile4[(row_group + kRowGroups * i) * stride4 + d4];
#pragma unroll
      for (int j = 0; j < kKeysPerThread; ++j)
        kv[j] = kv_tile4[(key_lane + kKeyLanes * j) * stride4 + d4];
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) {
#pragma unroll
        for (int j = 0; j < kKeysPerThread; ++j) {
          float s = score[i][j];
          s = fmaf(qv[i].x, kv[j].x, s);
          s = fmaf(qv[i].y, kv[j].y, s);
          s = fmaf(qv[i].z, kv[j].z, s);
          s = fmaf(qv[i].w, kv[j].w, s);
          score[i][j] = s;
        }
      }
    }

    // Soft-cap, causal and window mask by absolute position, then the online softmax update of
    // each row.
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int j = 0; j < kKeysPerThread; ++j) {
        const int key = key_begin + key_lane + kKeyLanes * j;
        if (args.softcap_log2 > 0.0f) score[i][j] = softcapped_log2_score(score[i][j], args);
        score[i][j] = key >= first_key[i] && key < context[i] ? score[i][j] : -INFINITY;
        tile_max = fmaxf(tile_max, score[i][j]);
      }
#pragma unroll
      for (int offset = 1; offset < kKeyLanes; offset *= 2)
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, offset));
      const float new_max = fmaxf(row_max[i], tile_max);
      const float correction = exp2_shifted(row_max[i], new_max);
      row_max[i] = new_max;
      row_sum[i] *= correction;
#pragma unroll
      for (int c = 0; c < kColumns; ++c) {
        acc[i][c].x *= correction;
        acc[i][c].y *= correction;
        acc[i][c].z *= correction;
        acc[i][c].w *= correction;
      }
      float* p_row = p_tile + (row_group + kRowGroups * i) * Tile::kPStride;
#pragma unroll
      for (int j = 0; j < kKeysPerThread; ++j) {
        const float p = exp2_shifted(score[i][j], new_max);
        row_sum[i] += p;
        p_row[key_lane + kKeyLanes * j] = p;
      }
    }
    __syncthreads();  // K fully read, P written

    gather_kv_tile<T, C, kHeadDim, kHeadDimCap>(args.v_cache, args.v_scales, args, block_table,
                                                kv_head, head_dim, stride, key_begin, max_context,
                                                kv_tile);
    __syncthreads();

#pragma unroll 2
    for (int k4 = 0; k4 < kKeys / 4; ++k4) {
      float4 p[kRowsPerThread];
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i)
        p[i] = p_tile4[(row_group + kRowGroups * i) * (Tile::kPStride / 4) + k4];
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const float4* v_row = kv_tile4 + (k4 * 4 + kk) * stride4;
#pragma unroll
        for (int c = 0; c < kColumns; ++c) {
          const int column4 = key_lane + kKeyLanes * c;
          if (kIsEveryColumnOwned || column4 < columns4) {
            const float4 v = v_row[column4];
#pragma unroll
            for (int i = 0; i < kRowsPerThread; ++i) {
              const float w = kk == 0 ? p[i].x : kk == 1 ? p[i].y : kk == 2 ? p[i].z : p[i].w;
              acc[i][c].x = fmaf(w, v.x, acc[i][c].x);
              acc[i][c].y = fmaf(w, v.y, acc[i][c].y);
              acc[i][c].z = fmaf(w, v.z, acc[i][c].z);
              acc[i][c].w = fmaf(w, v.w, acc[i][c].w);
            }
          }
        }
      }
    }
    __syncthreads();  // kv_tile and p_tile are rewritten by the next key tile
  }

  // Normalise and write this thread's columns of its rows.
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    float total = row_sum[i];
#pragma unroll
    for (int offset = 1; offset < kKeyLanes; offset *= 2)
      total += __shfl_xor_sync(0xffffffffu, total, offset);
    const int row = row_begin + row_group + kRowGroups * i;
    if (row >= num_rows) continue;
    const int token = token_begin + row / group_size;
    const int head = kv_head * group_size + row % group_size;
    const float inv_total =
        total > 0.0f ? 1.0f / (total + sink_weight(args, head, row_max[i])) : 0.0f;
    T* out = args.out + (static_cast<int64_t>(token) * args.num_heads + head) * head_dim;
#pragma unroll
    for (int c = 0; c < kColumns; ++c) {
      const int column4 = key_lane + kKeyLanes * c;
      if (column4 < columns4) {
        const float4 a = acc[i][c];
        store4(out + column4 * 4,
               make_float4(a.x * inv_total, a.y * inv_total, a.z * inv_total, a.w * inv_total));
      }
    }
  }
}

}  // namespace

template <typename T, typename C>
cudaError_t launch_paged_attention_prefill(const PagedAttentionArgs<T, C>& args, int num_tokens,
                                           cudaStream_t stream) {
  const int group_size = args.num_heads / args.num_kv_heads;
  return dispatch_head_dim(args.head_dim, [&](auto head_dim_tag) {
    using HeadDim = decltype(head_dim_tag);
    using Tile = PrefillTile<HeadDim::kHeadDimCap>;
    constexpr auto kernel =
        &paged_attention_prefill_kernel<T, C, HeadDim::kHeadDim, HeadDim::kHeadDimCap>;
    const size_t smem_bytes = Tile::smem_bytes(args.head_dim);
    const cudaError_t status = detail::allow_dynamic_shared<kernel>(smem_bytes);
    if (status != cudaSuccess) return status;
    const int64_t num_slots =
        static_cast<int64_t>(num_tokens) * group_size / Tile::kRows + args.num_requests;
    const dim3 grid(static_cast<unsigned>(num_slots), args.num_kv_heads);
    detail::launch_kernel(kernel, grid, kPrefillThreads, smem_bytes, stream, args);
    return cudaGetLastError();
  });
}

#define SLUICE_INSTANTIATE_PREFILL(T, C)                                                          \
  template cudaError_t launch_paged_attention_prefill<T, C>(const PagedAttentionArgs<T, C>& args, \
                                                            int num_tokens, cudaStream_t stream);
SLUICE_PAGED_ATTENTION_FOR_EACH_CACHE(SLUICE_INSTANTIATE_PREFILL)
#undef SLUICE_INSTANTIATE_PREFILL

}  // namespace sluice::kernels::attention
