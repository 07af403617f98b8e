// paged_attention with its internal choices made by the caller: for tests that compare the
// split-KV and single-pass decode, or the decode and tiled kernels, and for benchmarks.
// The engine calls paged_attention (paged_attention.cuh), which uses the defaults below.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/paged_attention.cuh"
#include "kernels/status.h"

namespace sluice::kernels {

struct PagedAttentionTuning {
  // Positions per split-KV partition of the decode pass. 0 picks the default (512, grown so that
  // no context needs more than 32 partitions); a negative value reads every context in one pass.
  int decode_partition_size = 0;
  // Runs requests of query length 1 through the tiled (prefill) kernel too.
  bool is_decode_tiled = false;
};

// As paged_attention, with the given tuning. Returns cudaErrorInvalidValue for unsupported
// params or a workspace smaller than paged_attention_workspace_bytes(params, tuning).
template <typename T>
KernelStatus paged_attention_tuned(const PagedAttentionParams& params,
                                   const PagedAttentionTuning& tuning, const T* q, const T* k_cache,
                                   const T* v_cache, const int32_t* block_tables,
                                   const int32_t* query_start_loc, const int32_t* seq_lens,
                                   const int32_t* positions, T* out, void* workspace,
                                   size_t workspace_bytes, cudaStream_t stream);

// As paged_attention_fp8, with the given tuning.
template <typename T>
KernelStatus paged_attention_fp8_tuned(const PagedAttentionParams& params,
                                       const PagedAttentionTuning& tuning, const T* q,
                                       const Fp8KvLayer& cache, const int32_t* block_tables,
                                       const int32_t* query_start_loc, const int32_t* seq_lens,
                                       const int32_t* positions, T* out, void* workspace,
                                       size_t workspace_bytes, cudaStream_t stream);

// Returns the workspace paged_attention_tuned needs with these params and tuning (0 when none).
size_t paged_attention_workspace_bytes(const PagedAttentionParams& params,
                                       const PagedAttentionTuning& tuning);

}  // namespace sluice::kernels
