// Sampling on the GPU with the CPU sampler's semantics (engine/runner/sampler.cpp), one thread
// block of 1024 threads per row:
//
//   0. A row with a grammar's token mask sets the logits the mask leaves out to -inf (one pass).
//   1. One pass over the row checks for NaN / +inf (before penalties, as the CPU does) and finds
//      the number of finite logits and the arg-max (largest logit, lowest id), all by block
//      reductions. A row with penalties applies them (one thread per penalty entry, float
//      operations spelled out with _rn intrinsics so that nothing is fused into an fma the CPU
//      does not do) and repeats the pass.
//   2. Temperature 0 returns the arg-max.
//   3. Otherwise top-k, top-p and the draw are cuts in the sampling order found by the radix
//      selection of kernels/sampling_select.cuh: top-k on counts; then weights
//      exp((logit - max) / T) exactly as the CPU rounds them; top-p on the weights; min-p as a
//      filter on the weight; the draw on the weights with the Philox uniform of
//      engine/core/philox.h. Each selection is a few passes over the row (one histogram pass,
//      one more per 11-bit digit while the crossing bucket holds more than 1024 candidates, and
//      a gather). Once the kept set is known to hold at most 1024 candidates (after top-k <=
//      1024, or after top-p), it is gathered and sorted in shared memory once and the remaining
//      steps work there without touching the row again.
//
// Cost, vocabulary 128k x 256 rows (512 KB of logits per row, read from L2 or HBM): 4 to 6 passes
// over each row, about 1-1.5 GB of reads for the batch, a few hundred microseconds on an H100;
// the weighted passes also evaluate one double-precision exp per candidate in the first pass
// only (later passes see the few keys left in the crossing bucket). A segmented sort of the
// same batch (32M keys) would cost several milliseconds; the CPU sampler takes about 1 ms per
// row on one core.
//
// Needs no workspace: every row's state fits in 33 KB of shared memory.
#include "kernels/sampling.cuh"

#include <cfloat>

#include "engine/core/philox.h"
#include "kernels/dtype_traits.cuh"
#include "kernels/sampling_select.cuh"

namespace sluice::kernels {
namespace {

using namespace sampling_detail;

// What one pass over a row learns.
struct RowStats {
  bool has_bad_logit;   // a NaN or +inf
  uint32_t num_finite;  // logits other than -inf
  float max_logit;      // the largest finite logit (meaningless when num_finite is 0)
  int32_t argmax_id;    // the lowest id holding max_logit
};

__device__ RowStats row_stats(SelectStorage& storage, const RowView& row) {
  int has_bad_logit = 0;
  uint32_t num_finite = 0;
  // The smallest (order_key << 32 | id) is the largest logit with the lowest id.
  unsigned long long best = kNoCut;
  for_each_logit(row, [&](int token_id, float logit) {
    if (!(logit < INFINITY)) {
      has_bad_logit = 1;
    } else if (logit > -INFINITY) {
      ++num_finite;
      const unsigned long long key =
          (static_cast<unsigned long long>(order_key(logit)) << 32) | static_cast<uint32_t>(token_id);
      best = key < best ? key : best;
    }
  });
  RowStats stats;
  stats.has_bad_logit = block_reduce(storage, has_bad_logit, MaxOp{}) != 0;
  stats.num_finite = block_reduce(storage, num_finite, SumOp{});
  best = block_reduce(storage, best, MinOp{});
  stats.max_logit = logit_of_key(static_cast<uint32_t>(best >> 32));
  stats.argmax_id = best == kNoCut ? -1 : static_cast<int32_t>(best & 0xffffffffu);
  return stats;
}

// std::clamp(penalised, -FLT_MAX, FLT_MAX) when original is finite (sampler.cpp's clamp_finite):
// a huge logit divided by a small penalty stays the most likely token instead of becoming inf.
__device__ __forceinline__ float clamp_finite(float penalised, float original) {
  if (!isfinite(original)) return penalised;
  return penalised < -FLT_MAX ? -FLT_MAX : (FLT_MAX < penalised ? FLT_MAX : penalised);
}

// Applies the row's penalties to its logits (repetition first, then frequency and presence on
// output tokens, as sampler.cpp does). Returns false, changing nothing, when an entry's token id
// is outside the vocabulary (the CPU sampler throws there). Precondition: the row's entries hold
// distinct ids.
__device__ bool apply_penalties(SelectStorage& storage, float* logits, int vocab_size,
                                const SamplingRow& params, const int32_t* penalty_token_ids,
                                const int32_t* penalty_output_counts) {
  const bool has_repetition = params.repetition_penalty != 1.0f;
  int has_bad_id = 0;
  for (int e = params.penalty_begin + threadIdx.x; e < params.penalty_end; e += kThreads) {
    has_bad_id |= penalty_token_ids[e] < 0 || penalty_token_ids[e] >= vocab_size;
  }
  if (block_reduce(storage, has_bad_id, MaxOp{}) != 0) return false;
  const bool has_output = params.frequency_penalty != 0.0f || params.presence_penalty != 0.0f;
  for (int e = params.penalty_begin + threadIdx.x; e < params.penalty_end; e += kThreads) {
    const int32_t token_id = penalty_token_ids[e];
    float logit = logits[token_id];
    if (has_repetition) {
      const float penalised = logit > 0.0f ? __fdiv_rn(logit, params.repetition_penalty)
                                           : __fmul_rn(logit, params.repetition_penalty);
      logit = clamp_finite(penalised, logit);
    }
    const int32_t count = penalty_output_counts[e];
    if (has_output && count > 0) {
      float penalised =
          __fsub_rn(logit, __fmul_rn(params.frequency_penalty, __int2float_rn(count)));
      penalised = __fsub_rn(penalised, params.presence_penalty);
      logit = clamp_finite(penalised, logit);
    }
    logits[token_id] = logit;
  }
  __syncthreads();  // the next pass reads the penalised logits
  return true;
}

__device__ __forceinline__ int32_t token_of_key(const RowView& row, uint64_t key) {
  return static_cast<int32_t>(key & ((uint64_t{1} << row.id_bits) - 1));
}

// Sum over the block of the masses of list_keys[0, n).
__device__ unsigned long long list_total(SelectStorage& storage, const RowView& row,
                                         const CandidateSet& set, int n) {
  const int i = threadIdx.x;
  const unsigned long long mass = i < n ? mass_of_key(set, row, storage.list_keys[i]) : 0;
  return block_reduce(storage, mass, SumOp{});
}

// Keeps, in order, the entries of list_keys[0, n) whose weight is not below min_p; returns how
// many are left (at least the first, whose weight is 1).
__device__ int keep_min_p(SelectStorage& storage, const RowView& row, const CandidateSet& set,
                          int n, float min_p) {
  const int i = threadIdx.x;
  const uint64_t key = i < n ? storage.list_keys[i] : 0;
  const bool is_kept =
      i < n && !(candidate_weight(logit_of_key(static_cast<uint32_t>(key >> row.id_bits)),
                                  set.weights) < min_p);
  // The scan synchronises, so every key is read before any is moved.
  const unsigned long long kept_through = block_inclusive_sum(storage, is_kept ? 1 : 0);
  if (is_kept) storage.list_keys[kept_through - 1] = key;
  return block_reduce(storage, is_kept ? 1 : 0, SumOp{});
}

// Gathers set (at most kListCapacity members) into shared memory, then applies top-p (when
// top_p < 1) and min-p (when min_p > 0) there and draws with uniform.
__device__ int32_t draw_from_list(SelectStorage& storage, const RowView& row,
                                  const CandidateSet& set, float top_p, float min_p,
                                  float uniform) {
  int n = gather_list(storage, row, set, 0, set.cut_key);
  if (top_p < 1.0f) {
    const double total = __ull2double_rn(list_total(storage, row, set, n));
    const Target target{__dmul_rn(static_cast<double>(top_p), total), /*is_inclusive=*/true};
    n = static_cast<int>(list_crossing(storage, row, set, n, 0, 0, target).rank);
  }
  if (min_p > 0.0f) n = keep_min_p(storage, row, set, n, min_p);
  const double total = __ull2double_rn(list_total(storage, row, set, n));
  const Target target{__dmul_rn(static_cast<double>(uniform), total), /*is_inclusive=*/false};
  return token_of_key(row, list_crossing(storage, row, set, n, 0, 0, target).key);
}

// Temperature sampling of a row with at least one finite logit.
__device__ int32_t sample_row(SelectStorage& storage, const RowView& row,
                              const SamplingRow& params, const RowStats& stats) {
  const int mass_shift = 62 - row.id_bits;
  CandidateSet set{kNoCut, /*is_weighted=*/false, /*min_weight=*/0.0f,
                   WeightParams{stats.max_logit,
                                __ddiv_rn(1.0, static_cast<double>(params.temperature)),
                                ldexp(1.0, mass_shift)}};
  // An upper bound on the size of the set kept so far.
  uint32_t num_kept = stats.num_finite;
  if (params.top_k > 0 && static_cast<uint32_t>(params.top_k) < stats.num_finite) {
    set.cut_key = select_crossing(storage, row, set, static_cast<double>(params.top_k),
                                  /*is_relative=*/false, /*is_inclusive=*/true)
                      .key;
    num_kept = static_cast<uint32_t>(params.top_k);
  }
  // From here on a candidate weighs its weight; those that underflowed to 0 drop out.
  set.is_weighted = true;
  const float uniform = sampling_uniform(params.seed, params.request_key, params.sample_idx,
                                         params.position);
  float top_p = params.top_p;
  if (num_kept > static_cast<uint32_t>(kListCapacity) && top_p < 1.0f) {
    const Crossing crossing = select_crossing(storage, row, set, static_cast<double>(top_p),
                                              /*is_relative=*/true, /*is_inclusive=*/true);
    set.cut_key = crossing.key;
    num_kept = crossing.rank;
    top_p = 1.0f;  // applied
  }
  if (num_kept <= static_cast<uint32_t>(kListCapacity)) {
    return draw_from_list(storage, row, set, top_p, params.min_p, uniform);
  }
  if (params.min_p > 0.0f) set.min_weight = params.min_p;
  const Crossing drawn = select_crossing(storage, row, set, static_cast<double>(uniform),
                                         /*is_relative=*/true, /*is_inclusive=*/false);
  return token_of_key(row, drawn.key);
}

// Sets the logits of the tokens the row's mask leaves out to -inf. One thread per token, so the
// writes are coalesced and the 32 lanes of a warp read the same mask word.
__device__ void apply_token_mask(float* logits, int vocab_size, const uint32_t* mask) {
  for (int id = static_cast<int>(threadIdx.x); id < vocab_size; id += kThreads) {
    if (((mask[id >> 5] >> (id & 31)) & 1u) == 0) logits[id] = -INFINITY;
  }
  __syncthreads();  // the next pass reads the masked logits
}

__device__ int32_t choose_token(SelectStorage& storage, float* logits, const RowView& row,
                                const SamplingRow& params, const int32_t* penalty_token_ids,
                                const int32_t* penalty_output_counts, const uint32_t* token_masks) {
  if (params.mask_row >= 0) {
    apply_token_mask(
        logits, row.vocab_size,
        token_masks + static_cast<int64_t>(params.mask_row) * mask_words(row.vocab_size));
  }
  RowStats stats = row_stats(storage, row);
  if (stats.has_bad_logit) return -1;
  const bool has_penalty = params.repetition_penalty != 1.0f || params.frequency_penalty != 0.0f ||
                           params.presence_penalty != 0.0f;
  if (has_penalty && params.penalty_begin < params.penalty_end) {
    if (!apply_penalties(storage, logits, row.vocab_size, params, penalty_token_ids,
                         penalty_output_counts)) {
      return -1;
    }
    stats = row_stats(storage, row);
  }
  if (stats.num_finite == 0) return -1;
  // Temperature 0 (or an invalid one, which the host rejects before launch) is greedy.
  if (!(params.temperature > 0.0f)) return stats.argmax_id;
  return sample_row(storage, row, params, stats);
}

// logits:                [num_rows, vocab_size] (one block per row)
// rows:                  [num_rows]
// penalty_token_ids:     [num_penalty_entries]
// penalty_output_counts: [num_penalty_entries]
// token_masks:           [num_masks, mask_words(vocab_size)]
// out_tokens:            [num_rows]
__global__ void __launch_bounds__(kThreads, 1)
    sample_tokens_kernel(float* logits, const SamplingRow* __restrict__ rows,
                         const int32_t* __restrict__ penalty_token_ids,
                         const int32_t* __restrict__ penalty_output_counts,
                         const uint32_t* __restrict__ token_masks, int32_t* __restrict__ out_tokens,
                         int vocab_size, int id_bits) {
  __shared__ SelectStorage storage;
  const SamplingRow params = rows[blockIdx.x];
  float* row_logits = logits + static_cast<int64_t>(blockIdx.x) * vocab_size;
  const RowView row{row_logits, vocab_size, id_bits, detail::is_aligned_16(row_logits)};
  const int32_t token = choose_token(storage, row_logits, row, params, penalty_token_ids,
                                     penalty_output_counts, token_masks);
  if (threadIdx.x == 0) out_tokens[blockIdx.x] = token;
}

// Returns the bits needed for the ids 0 .. vocab_size - 1.
int id_bits_for(int vocab_size) {
  int bits = 0;
  while (bits < 31 && (int64_t{1} << bits) < vocab_size) ++bits;
  return bits;
}

}  // namespace

KernelStatus sample_tokens(float* logits, const SamplingRow* rows, const int32_t* penalty_token_ids,
                           const int32_t* penalty_output_counts, const uint32_t* token_masks,
                           int32_t* out_tokens, int num_rows, int vocab_size, void* workspace,
                           size_t workspace_bytes, cudaStream_t stream) {
  (void)workspace;
  if (num_rows < 0 || vocab_size <= 0) return detail::invalid_argument();
  if (workspace_bytes < sampling_workspace_bytes(num_rows, vocab_size)) {
    return detail::invalid_argument();
  }
  if (num_rows == 0) return kKernelOk;
  detail::launch_kernel(sample_tokens_kernel, num_rows, kThreads, 0, stream, logits, rows,
                        penalty_token_ids, penalty_output_counts, token_masks, out_tokens,
                        vocab_size, id_bits_for(vocab_size));
  return detail::launch_status();
}

size_t sampling_workspace_bytes(int num_rows, int vocab_size) {
  (void)num_rows;
  (void)vocab_size;
  return 0;  // all per-row state lives in shared memory
}

}  // namespace sluice::kernels
