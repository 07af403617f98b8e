// paged_attention: checks the params, plans the decode split, and runs the decode pass (query
// length 1, with its merge when split) and the tiled pass (longer query chunks). The two
// passes write disjoint rows of out. Kernels: paged_attention_decode.cu,
// paged_attention_prefill.cu; design notes: paged_attention_common.cuh.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/paged_attention.cuh"
#include "kernels/paged_attention_common.cuh"
#include "kernels/paged_attention_tuning.cuh"

namespace sluice::kernels {

namespace {

using attention::ceil_div;
using detail::is_aligned;

constexpr int kDefaultDecodePartitionSize = 512;
constexpr int kMaxDefaultDecodePartitions = 32;  // bounds the workspace for long contexts
constexpr int kMaxGridYZ = 65535;
constexpr size_t kMaxMergeSmemBytes = 48 * 1024;

struct DecodePlan {
  int partition_size = 0;  // 0: one pass over each context
  int max_num_partitions = 1;
};

// Most keys one query sees: the longest context, or the window when that is shorter.
int max_visible_keys(const PagedAttentionParams& params) {
  return params.sliding_window > 0 ? std::min(params.max_seq_len, params.sliding_window)
                                   : params.max_seq_len;
}

// Partitions split each decode token's visible keys (its window, not its whole context).
DecodePlan plan_decode(const PagedAttentionParams& params, const PagedAttentionTuning& tuning) {
  if (tuning.is_decode_tiled || tuning.decode_partition_size < 0 || params.max_seq_len <= 0)
    return {};
  const int max_keys = max_visible_keys(params);
  int partition_size = tuning.decode_partition_size;
  if (partition_size == 0) {
    const int needed = ceil_div(max_keys, kMaxDefaultDecodePartitions);
    partition_size =
        std::max(kDefaultDecodePartitionSize,
                 ceil_div(needed, kDefaultDecodePartitionSize) * kDefaultDecodePartitionSize);
  }
  const int max_num_partitions = ceil_div(max_keys, partition_size);
  if (max_num_partitions <= 1) return {};
  return {partition_size, max_num_partitions};
}

// The params the kernels support (head_dim a multiple of 8 up to 256, whole query-head groups,
// options in range, grid limits) with the plan they run under.
bool are_params_supported(const PagedAttentionParams& p, const DecodePlan& plan) {
  if (p.num_tokens < 0 || p.num_requests <= 0 || p.num_heads <= 0 || p.num_kv_heads <= 0)
    return false;
  if (p.head_dim <= 0 || p.head_dim % 8 != 0 || p.head_dim > attention::kMaxHeadDim) return false;
  if (p.num_heads % p.num_kv_heads != 0 || p.num_heads > kMaxGridYZ) return false;
  if (p.block_size <= 0 || p.max_blocks_per_request <= 0 || p.max_seq_len <= 0) return false;
  if (!std::isfinite(p.scale) || p.scale <= 0.0f) return false;
  if (!std::isfinite(p.logit_softcap) || p.logit_softcap < 0.0f || p.sliding_window < 0)
    return false;
  if (p.q_row_stride != 0 &&
      (p.q_row_stride < static_cast<int64_t>(p.num_heads) * p.head_dim || p.q_row_stride % 8 != 0))
    return false;
  if (plan.max_num_partitions > kMaxGridYZ ||
      attention::merge_shared_bytes(plan.max_num_partitions) > kMaxMergeSmemBytes)
    return false;
  // Decode grid y is num_kv_heads * ceil(group / 8) <= num_heads; tiled grid x below 2^31.
  const int64_t group_size = p.num_heads / p.num_kv_heads;
  return static_cast<int64_t>(p.num_tokens) * group_size + p.num_requests < (int64_t{1} << 31);
}

size_t workspace_bytes_for(const PagedAttentionParams& params, const DecodePlan& plan) {
  if (plan.max_num_partitions <= 1) return 0;
  return static_cast<size_t>(params.num_requests) * params.num_heads * plan.max_num_partitions *
         (params.head_dim + 2) * sizeof(float);
}

}  // namespace

size_t paged_attention_workspace_bytes(const PagedAttentionParams& params,
                                       const PagedAttentionTuning& tuning) {
  if (params.num_requests <= 0 || params.num_heads <= 0 || params.head_dim <= 0) return 0;
  return workspace_bytes_for(params, plan_decode(params, tuning));
}

size_t paged_attention_workspace_bytes(const PagedAttentionParams& params) {
  return paged_attention_workspace_bytes(params, PagedAttentionTuning{});
}

namespace {

// Both entry points: C is T (the cache in the activation type) or Fp8E4M3 (codes, with k_scales
// and v_scales).
template <typename T, typename C>
KernelStatus run_paged_attention(const PagedAttentionParams& params,
                                 const PagedAttentionTuning& tuning, const T* q, const C* k_cache,
                                 const C* v_cache, const float* k_scales, const float* v_scales,
                                 const int32_t* block_tables, const int32_t* query_start_loc,
                                 const int32_t* seq_lens, const int32_t* positions, T* out,
                                 void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  if (params.num_tokens == 0) return kKernelOk;
  const DecodePlan plan = plan_decode(params, tuning);
  if (!are_params_supported(params, plan)) return cudaErrorInvalidValue;
  if (q == nullptr || k_cache == nullptr || v_cache == nullptr || out == nullptr ||
      block_tables == nullptr || query_start_loc == nullptr || seq_lens == nullptr ||
      positions == nullptr)
    return cudaErrorInvalidValue;
  if (attention::kIsFp8Cache<C> && (k_scales == nullptr || v_scales == nullptr))
    return cudaErrorInvalidValue;
  // Rows are read and written 8 (or 4) elements at a time with 16-byte (8-byte) accesses.
  if (!is_aligned(q, 16) || !is_aligned(k_cache, 16) || !is_aligned(v_cache, 16) ||
      !is_aligned(out, 16))
    return cudaErrorInvalidValue;
  const size_t needed_bytes = workspace_bytes_for(params, plan);
  if (needed_bytes > 0 &&
      (workspace == nullptr || workspace_bytes < needed_bytes || !is_aligned(workspace, 16)))
    return cudaErrorInvalidValue;

  attention::PagedAttentionArgs<T, C> args{};
  args.q = q;
  args.k_cache = k_cache;
  args.v_cache = v_cache;
  args.k_scales = k_scales;
  args.v_scales = v_scales;
  args.block_tables = block_tables;
  args.query_start_loc = query_start_loc;
  args.seq_lens = seq_lens;
  args.positions = positions;
  args.out = out;
  args.num_requests = params.num_requests;
  args.num_heads = params.num_heads;
  args.q_row_stride = params.q_row_stride != 0
                          ? params.q_row_stride
                          : static_cast<int64_t>(params.num_heads) * params.head_dim;
  args.num_kv_heads = params.num_kv_heads;
  args.head_dim = params.head_dim;
  args.block_size = params.block_size;
  args.max_blocks_per_request = params.max_blocks_per_request;
  const bool has_softcap = params.logit_softcap > 0.0f;
  args.q_scale = has_softcap ? params.scale : params.scale * attention::kLog2e;
  args.softcap_log2 = has_softcap ? params.logit_softcap * attention::kLog2e : 0.0f;
  args.inv_softcap = has_softcap ? 1.0f / params.logit_softcap : 0.0f;
  args.sliding_window = params.sliding_window;
  args.partition_size = plan.partition_size;
  args.max_num_partitions = plan.max_num_partitions;
  args.is_decode_tiled = tuning.is_decode_tiled;
  args.sinks = params.sinks;
  if (needed_bytes > 0) {
    const size_t num_partials =
        static_cast<size_t>(params.num_requests) * params.num_heads * plan.max_num_partitions;
    args.partial_acc = static_cast<float*>(workspace);
    args.partial_max = args.partial_acc + num_partials * params.head_dim;
    args.partial_sum = args.partial_max + num_partials;
  }

  // The decode pass has work only when some request has exactly one query token.
  if (!tuning.is_decode_tiled && params.min_query_len <= 1) {
    const cudaError_t status = attention::launch_paged_attention_decode(args, stream);
    if (status != cudaSuccess) return status;
  }
  // The tiled pass has work only when some request has more than one query token (or when it
  // runs decode requests too); max_query_len == 0 means unknown.
  if (params.max_query_len != 1 || tuning.is_decode_tiled) {
    const cudaError_t status =
        attention::launch_paged_attention_prefill(args, params.num_tokens, stream);
    if (status != cudaSuccess) return status;
  }
  return kKernelOk;
}

const Fp8E4M3* as_codes(const uint8_t* codes) {
  return reinterpret_cast<const Fp8E4M3*>(codes);
}

}  // namespace

template <typename T>
KernelStatus paged_attention_tuned(const PagedAttentionParams& params,
                                   const PagedAttentionTuning& tuning, const T* q, const T* k_cache,
                                   const T* v_cache, const int32_t* block_tables,
                                   const int32_t* query_start_loc, const int32_t* seq_lens,
                                   const int32_t* positions, T* out, void* workspace,
                                   size_t workspace_bytes, cudaStream_t stream) {
  return run_paged_attention<T, T>(params, tuning, q, k_cache, v_cache, nullptr, nullptr,
                                   block_tables, query_start_loc, seq_lens, positions, out,
                                   workspace, workspace_bytes, stream);
}

template <typename T>
KernelStatus paged_attention_fp8_tuned(const PagedAttentionParams& params,
                                       const PagedAttentionTuning& tuning, const T* q,
                                       const Fp8KvLayer& cache, const int32_t* block_tables,
                                       const int32_t* query_start_loc, const int32_t* seq_lens,
                                       const int32_t* positions, T* out, void* workspace,
                                       size_t workspace_bytes, cudaStream_t stream) {
  return run_paged_attention<T, Fp8E4M3>(params, tuning, q, as_codes(cache.k_codes),
                                         as_codes(cache.v_codes), cache.k_scales, cache.v_scales,
                                         block_tables, query_start_loc, seq_lens, positions, out,
                                         workspace, workspace_bytes, stream);
}

template <typename T>
KernelStatus paged_attention_fp8(const PagedAttentionParams& params, const T* q,
                                 const Fp8KvLayer& cache, const int32_t* block_tables,
                                 const int32_t* query_start_loc, const int32_t* seq_lens,
                                 const int32_t* positions, T* out, void* workspace,
                                 size_t workspace_bytes, cudaStream_t stream) {
  return paged_attention_fp8_tuned(params, PagedAttentionTuning{}, q, cache, block_tables,
                                   query_start_loc, seq_lens, positions, out, workspace,
                                   workspace_bytes, stream);
}

template <typename T>
KernelStatus paged_attention(const PagedAttentionParams& params, const T* q, const T* k_cache,
                             const T* v_cache, const int32_t* block_tables,
                             const int32_t* query_start_loc, const int32_t* seq_lens,
                             const int32_t* positions, T* out, void* workspace,
                             size_t workspace_bytes, cudaStream_t stream) {
  return paged_attention_tuned(params, PagedAttentionTuning{}, q, k_cache, v_cache, block_tables,
                               query_start_loc, seq_lens, positions, out, workspace,
                               workspace_bytes, stream);
}

#define SLUICE_INSTANTIATE_PAGED_ATTENTION(T)                                                    \
  template KernelStatus paged_attention<T>(                                                      \
      const PagedAttentionParams&, const T*, const T*, const T*, const int32_t*, const int32_t*, \
      const int32_t*, const int32_t*, T*, void*, size_t, cudaStream_t);                          \
  template KernelStatus paged_attention_tuned<T>(                                                \
      const PagedAttentionParams&, const PagedAttentionTuning&, const T*, const T*, const T*,    \
      const int32_t*, const int32_t*, const int32_t*, const int32_t*, T*, void*, size_t,         \
      cudaStream_t);                                                                             \
  template KernelStatus paged_attention_fp8<T>(                                                  \
      const PagedAttentionParams&, const T*, const Fp8KvLayer&, const int32_t*, const int32_t*,  \
      const int32_t*, const int32_t*, T*, void*, size_t, cudaStream_t);                          \
  template KernelStatus paged_attention_fp8_tuned<T>(                                            \
      const PagedAttentionParams&, const PagedAttentionTuning&, const T*, const Fp8KvLayer&,     \
      const int32_t*, const int32_t*, const int32_t*, const int32_t*, T*, void*, size_t,         \
      cudaStream_t);
SLUICE_PAGED_ATTENTION_FOR_EACH_DTYPE(SLUICE_INSTANTIATE_PAGED_ATTENTION)
#undef SLUICE_INSTANTIATE_PAGED_ATTENTION

}  // namespace sluice::kernels
