// Private to kernels/sampling.cu: finding a cut in the sampling order of one row of logits with
// one thread block, without sorting the vocabulary.
//
// The sampling order is "logit descending, then token id ascending". It is the ascending order
// of the 64-bit composite key (order_key(logit) << id_bits) | token_id, where order_key maps
// logits to unsigned ints in reverse float order and id_bits is just wide enough for the ids.
// Keys are unique, so every cut is a single key and ties never need a second rule.
//
// Top-k, top-p and the draw all ask: walking the candidates in that order while summing a mass
// (1 per token for top-k, the token's weight otherwise), where does the sum first cross a target?
// select_crossing answers with a most-significant-digit radix selection on the composite key:
// a histogram pass over the row counts candidates and sums their masses per 11-bit digit
// (2048 shared-memory buckets), a block scan over the buckets finds the one where the running
// sum crosses, and the next pass looks only at keys in that bucket. As soon as the candidates
// left fit in one element per thread (1024), they are gathered into shared memory, sorted
// (bitonic) and scanned; usually that is after one or two passes.
//
// Masses are integers, so every sum is exact and independent of the order in which threads add:
// a weight w in (0, 1] counts as round(w * 2^mass_shift) with mass_shift = 62 - id_bits, which
// keeps the sum of a whole vocabulary below 2^62 and resolves weights to 2^-44 (vocab 151936).
// The CPU sampler sums the same weights in double; the two totals differ by ~1e-13 relative, so
// a cut can differ only when the target lands that close to a tile boundary. Comparisons are
// made in double on those integer sums, so weights that are exact in both (1, 0.5, ...) give
// the CPU's answer exactly, including its ties.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace sluice::kernels::sampling_detail {

constexpr int kThreads = 1024;
constexpr int kNumWarps = kThreads / 32;
constexpr int kListCapacity = kThreads;  // one gathered candidate per thread
constexpr int kDigitBits = 11;
constexpr int kNumBuckets = 1 << kDigitBits;
constexpr int kBucketsPerThread = kNumBuckets / kThreads;
static_assert(kNumBuckets % kThreads == 0, "every thread owns the same number of buckets");
constexpr uint64_t kNoCut = ~uint64_t{0};
constexpr unsigned int kFullMask = 0xffffffffu;

// Shared memory of one row's block (about 33 KB).
struct SelectStorage {
  uint32_t bucket_counts[kNumBuckets];
  unsigned long long bucket_masses[kNumBuckets];
  unsigned long long list_keys[kListCapacity];  // gathered composite keys, sorted ascending
  unsigned long long warp_scratch[kNumWarps];
  unsigned long long bucket_mass_before;  // published by the thread that owns the chosen bucket
  uint32_t bucket_count_before;
  uint32_t bucket_count;
  int list_size;
};

// ---- block-wide primitives (every thread calls them; each returns to every thread) ---------

template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T value, Op op) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    value = op(value, __shfl_xor_sync(kFullMask, value, offset));
  }
  return value;
}

// Reduces value over the block; the warps' partials are combined in warp order, so the result
// is deterministic. T is at most 8 bytes.
template <typename T, typename Op>
__device__ T block_reduce(SelectStorage& storage, T value, Op op) {
  static_assert(sizeof(T) <= sizeof(unsigned long long), "fits a scratch slot");
  value = warp_reduce(value, op);
  T* scratch = reinterpret_cast<T*>(storage.warp_scratch);
  constexpr int kStride = sizeof(unsigned long long) / sizeof(T);  // one 8-byte slot per warp
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32 * kStride] = value;
  __syncthreads();
  T total = scratch[0];
  for (int warp = 1; warp < kNumWarps; ++warp) total = op(total, scratch[warp * kStride]);
  __syncthreads();  // the scratch may be reused at once
  return total;
}

struct SumOp {
  template <typename T>
  __device__ T operator()(T a, T b) const { return a + b; }
};
struct MinOp {
  template <typename T>
  __device__ T operator()(T a, T b) const { return b < a ? b : a; }
};
struct MaxOp {
  template <typename T>
  __device__ T operator()(T a, T b) const { return a < b ? b : a; }
};

// Returns the inclusive prefix sum of value over the threads in order.
__device__ unsigned long long block_inclusive_sum(SelectStorage& storage,
                                                  unsigned long long value) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  for (int offset = 1; offset < 32; offset <<= 1) {
    const unsigned long long other = __shfl_up_sync(kFullMask, value, offset);
    if (lane >= offset) value += other;
  }
  if (lane == 31) storage.warp_scratch[warp] = value;
  __syncthreads();
  unsigned long long offset = 0;
  for (int w = 0; w < warp; ++w) offset += storage.warp_scratch[w];
  __syncthreads();
  return value + offset;
}

// Sorts list_keys[0, n) ascending (bitonic network over the next power of two, padded with the
// largest key). Precondition: n <= kListCapacity; all threads call it.
__device__ void sort_list(SelectStorage& storage, int n) {
  if (n <= 1) return;
  int size = 2;
  while (size < n) size <<= 1;
  const int i = threadIdx.x;
  if (i >= n && i < size) storage.list_keys[i] = kNoCut;
  __syncthreads();
  for (int k = 2; k <= size; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      const int partner = i ^ j;
      if (i < size && partner > i) {
        const unsigned long long a = storage.list_keys[i];
        const unsigned long long b = storage.list_keys[partner];
        const bool is_ascending = (i & k) == 0;
        if ((a > b) == is_ascending) {
          storage.list_keys[i] = b;
          storage.list_keys[partner] = a;
        }
      }
      __syncthreads();
    }
  }
}

// ---- keys, weights and masses ----------------------------------------------------------------

// Maps a logit to a key whose ascending order is the descending order of logits; -0 and +0
// share a key because they compare equal (engine/runner/sampler.cpp's order_key).
__device__ __forceinline__ uint32_t order_key(float logit) {
  const uint32_t bits = __float_as_uint(logit == 0.0f ? 0.0f : logit);
  const uint32_t ascending = (bits & 0x80000000u) != 0 ? ~bits : (bits | 0x80000000u);
  return ~ascending;
}

// Inverse of order_key (a zero comes back as +0).
__device__ __forceinline__ float logit_of_key(uint32_t key) {
  const uint32_t ascending = ~key;
  const uint32_t bits = (ascending & 0x80000000u) != 0 ? (ascending & 0x7fffffffu) : ~ascending;
  return __uint_as_float(bits);
}

// One row of logits as the passes read it.
struct RowView {
  const float* logits;  // [vocab_size], penalised
  int vocab_size;
  int id_bits;          // ids fit in id_bits bits
  bool is_vec4;         // logits is 16-byte aligned: read it as float4
};

// Calls visit(token_id, logit) for this thread's share of the row.
template <typename Visit>
__device__ __forceinline__ void for_each_logit(const RowView& row, Visit&& visit) {
  int first_scalar = 0;
  if (row.is_vec4) {
    const int num_vec4 = row.vocab_size / 4;
    const auto* logits4 = reinterpret_cast<const float4*>(row.logits);
    for (int j = threadIdx.x; j < num_vec4; j += kThreads) {
      const float4 v = logits4[j];
      visit(4 * j, v.x);
      visit(4 * j + 1, v.y);
      visit(4 * j + 2, v.z);
      visit(4 * j + 3, v.w);
    }
    first_scalar = num_vec4 * 4;
  }
  for (int i = first_scalar + static_cast<int>(threadIdx.x); i < row.vocab_size; i += kThreads) {
    visit(i, row.logits[i]);
  }
}

// What turns a logit into a weight, as engine/runner/sampler.cpp's weigh_candidates does.
struct WeightParams {
  float max_logit;             // the largest finite logit of the row
  double inverse_temperature;  // 1.0 / temperature in double
  double mass_scale;           // 2^mass_shift
};

// Returns exp((logit - max_logit) / temperature) rounded to float: the difference and the scaling
// in double, clamped at -128 and rounded to float as the CPU does, then exp in double rounded to
// float, which is the correctly rounded expf except in astronomically rare cases (glibc's expf
// is within 0.502 ulp, so the two agree on all but a tiny fraction of inputs).
__device__ __forceinline__ float candidate_weight(float logit, const WeightParams& params) {
  const double scaled = __dmul_rn(
      __dsub_rn(static_cast<double>(logit), static_cast<double>(params.max_logit)),
      params.inverse_temperature);
  // exp(-104.5) rounds to 0 in float: skip the exp for the long tail.
  if (scaled < -104.5) return 0.0f;
  const float argument = __double2float_rn(scaled);
  return __double2float_rn(exp(static_cast<double>(argument)));
}

__device__ __forceinline__ unsigned long long weight_mass(float weight,
                                                          const WeightParams& params) {
  return __double2ull_rn(__dmul_rn(static_cast<double>(weight), params.mass_scale));
}

// The candidates a selection walks: finite logits whose key is at most cut_key; with is_weighted,
// also weight > 0 and not below min_weight, each weighing its fixed-point weight (else 1).
struct CandidateSet {
  uint64_t cut_key;
  bool is_weighted;
  float min_weight;
  WeightParams weights;
};

// Returns true when (token_id, logit) is in set with a key in [key_low, key_high], with its key
// and mass.
__device__ __forceinline__ bool evaluate(const CandidateSet& set, const RowView& row,
                                         uint64_t key_low, uint64_t key_high, int token_id,
                                         float logit, uint64_t& key, unsigned long long& mass) {
  if (!(logit > -INFINITY)) return false;  // -inf tokens are impossible
  key = (static_cast<uint64_t>(order_key(logit)) << row.id_bits) | static_cast<uint64_t>(token_id);
  if (key < key_low || key > key_high) return false;
  if (!set.is_weighted) {
    mass = 1;
    return true;
  }
  const float weight = candidate_weight(logit, set.weights);
  if (!(weight > 0.0f) || weight < set.min_weight) return false;
  mass = weight_mass(weight, set.weights);
  return true;
}

// Returns the mass of a key already known to be in set.
__device__ __forceinline__ unsigned long long mass_of_key(const CandidateSet& set,
                                                          const RowView& row, uint64_t key) {
  if (!set.is_weighted) return 1;
  const float logit = logit_of_key(static_cast<uint32_t>(key >> row.id_bits));
  return weight_mass(candidate_weight(logit, set.weights), set.weights);
}

// ---- crossing ----------------------------------------------------------------------------------

// When a running sum "crosses": it reaches units (is_inclusive) or exceeds it.
struct Target {
  double units;
  bool is_inclusive;
};

__device__ __forceinline__ bool crosses(unsigned long long cumulative, const Target& target) {
  const double sum = __ull2double_rn(cumulative);
  return target.is_inclusive ? sum >= target.units : sum > target.units;
}

// Where a walk stopped: the crossing candidate's key and its 1-based rank in the set.
struct Crossing {
  uint64_t key;
  uint32_t rank;
};

// Gathers the members of set with keys in [key_low, key_high] into list_keys, sorted; returns
// how many. Precondition: at most kListCapacity of them.
__device__ int gather_list(SelectStorage& storage, const RowView& row, const CandidateSet& set,
                           uint64_t key_low, uint64_t key_high) {
  if (threadIdx.x == 0) storage.list_size = 0;
  __syncthreads();
  for_each_logit(row, [&](int token_id, float logit) {
    uint64_t key;
    unsigned long long mass;
    if (evaluate(set, row, key_low, key_high, token_id, logit, key, mass)) {
      const int slot = atomicAdd(&storage.list_size, 1);
      if (slot < kListCapacity) storage.list_keys[slot] = key;
    }
  });
  __syncthreads();
  const int n = min(storage.list_size, kListCapacity);
  sort_list(storage, n);
  return n;
}

// Walks list_keys[0, n) (sorted) from mass_before and returns the first entry whose running sum
// crosses target (the last one if rounding lets none cross). rank_before: members before the list.
__device__ Crossing list_crossing(SelectStorage& storage, const RowView& row,
                                  const CandidateSet& set, int n, unsigned long long mass_before,
                                  uint32_t rank_before, const Target& target) {
  const int i = threadIdx.x;
  const unsigned long long mass = i < n ? mass_of_key(set, row, storage.list_keys[i]) : 0;
  const unsigned long long running = mass_before + block_inclusive_sum(storage, mass);
  const int crossing_idx = i < n && crosses(running, target) ? i : kListCapacity;
  int first = block_reduce(storage, crossing_idx, MinOp{});
  if (first >= n) first = n - 1;
  return Crossing{storage.list_keys[first], rank_before + static_cast<uint32_t>(first) + 1};
}

// Fills the bucket histogram of the set's members with keys in [key_low, key_high] by the digit
// at bit shift; returns (to every thread) how many members were counted and their total mass.
__device__ void histogram(SelectStorage& storage, const RowView& row, const CandidateSet& set,
                          uint64_t key_low, uint64_t key_high, int shift,
                          unsigned long long& total_mass, uint32_t& total_count) {
  __syncthreads();  // the previous histogram may still be read
  for (int j = 0; j < kBucketsPerThread; ++j) {
    storage.bucket_counts[threadIdx.x * kBucketsPerThread + j] = 0;
    storage.bucket_masses[threadIdx.x * kBucketsPerThread + j] = 0;
  }
  __syncthreads();
  for_each_logit(row, [&](int token_id, float logit) {
    uint64_t key;
    unsigned long long mass;
    if (evaluate(set, row, key_low, key_high, token_id, logit, key, mass)) {
      const auto bucket = static_cast<int>((key >> shift) & (kNumBuckets - 1));
      atomicAdd(&storage.bucket_counts[bucket], 1u);
      if (set.is_weighted) atomicAdd(&storage.bucket_masses[bucket], mass);
    }
  });
  __syncthreads();
  unsigned long long my_mass = 0;
  uint32_t my_count = 0;
  for (int j = 0; j < kBucketsPerThread; ++j) {
    const int bucket = threadIdx.x * kBucketsPerThread + j;
    my_count += storage.bucket_counts[bucket];
    my_mass += set.is_weighted ? storage.bucket_masses[bucket] : storage.bucket_counts[bucket];
  }
  total_mass = block_reduce(storage, my_mass, SumOp{});
  total_count = block_reduce(storage, my_count, SumOp{});
}

// Finds the bucket where the running sum, starting at mass_before, first crosses target (the
// last non-empty one if none does); returns it and advances mass_before and rank_before past the
// buckets before it. bucket_count receives its number of members.
__device__ int crossing_bucket(SelectStorage& storage, const CandidateSet& set,
                               const Target& target, unsigned long long& mass_before,
                               uint32_t& rank_before, uint32_t& bucket_count) {
  unsigned long long masses[kBucketsPerThread];
  uint32_t counts[kBucketsPerThread];
  unsigned long long my_mass = 0;
  unsigned long long my_count = 0;
  for (int j = 0; j < kBucketsPerThread; ++j) {
    const int bucket = threadIdx.x * kBucketsPerThread + j;
    counts[j] = storage.bucket_counts[bucket];
    masses[j] = set.is_weighted ? storage.bucket_masses[bucket] : counts[j];
    my_mass += masses[j];
    my_count += counts[j];
  }
  const unsigned long long mass_through = block_inclusive_sum(storage, my_mass);
  const unsigned long long count_through = block_inclusive_sum(storage, my_count);
  int first_crossing = kNumBuckets;
  int last_non_empty = -1;
  unsigned long long running = mass_before + (mass_through - my_mass);
  for (int j = 0; j < kBucketsPerThread; ++j) {
    running += masses[j];
    if (counts[j] == 0) continue;
    last_non_empty = threadIdx.x * kBucketsPerThread + j;
    if (first_crossing == kNumBuckets && crosses(running, target)) first_crossing = last_non_empty;
  }
  int chosen = block_reduce(storage, first_crossing, MinOp{});
  if (chosen == kNumBuckets) chosen = block_reduce(storage, last_non_empty, MaxOp{});
  if (chosen / kBucketsPerThread == static_cast<int>(threadIdx.x)) {
    unsigned long long before = mass_before + (mass_through - my_mass);
    unsigned long long count = count_through - my_count;
    for (int j = 0; j < chosen % kBucketsPerThread; ++j) {
      before += masses[j];
      count += counts[j];
    }
    storage.bucket_mass_before = before;
    storage.bucket_count_before = static_cast<uint32_t>(count);
    storage.bucket_count = counts[chosen % kBucketsPerThread];
  }
  __syncthreads();
  mass_before = storage.bucket_mass_before;
  rank_before += storage.bucket_count_before;
  bucket_count = storage.bucket_count;
  __syncthreads();
  return chosen;
}

// Returns the first member of set, in sampling order, at which the running mass crosses the
// target: factor itself, or factor * (the set's total mass) when is_relative. Precondition:
// set is not empty; all threads call it.
__device__ Crossing select_crossing(SelectStorage& storage, const RowView& row,
                                    const CandidateSet& set, double factor, bool is_relative,
                                    bool is_inclusive) {
  const int total_bits = 32 + row.id_bits;
  int shift = total_bits - min(kDigitBits, total_bits);
  uint64_t key_low = 0;
  uint64_t key_high = set.cut_key;
  unsigned long long total_mass;
  uint32_t num_matching;
  histogram(storage, row, set, key_low, key_high, shift, total_mass, num_matching);
  const Target target{is_relative ? __dmul_rn(factor, __ull2double_rn(total_mass)) : factor,
                      is_inclusive};
  unsigned long long mass_before = 0;
  uint32_t rank_before = 0;
  for (;;) {
    if (num_matching <= static_cast<uint32_t>(kListCapacity)) {
      const int n = gather_list(storage, row, set, key_low, key_high);
      return list_crossing(storage, row, set, n, mass_before, rank_before, target);
    }
    const int bucket = crossing_bucket(storage, set, target, mass_before, rank_before,
                                       num_matching);
    // Narrow to the bucket's keys: its digit fixed, the bits below it free, never past the cut.
    // (A last digit narrower than 11 bits also extracts already fixed bits above it; they are
    // equal for every member, so the OR below changes nothing there.)
    key_low |= static_cast<uint64_t>(bucket) << shift;
    const uint64_t bucket_high = key_low | ((uint64_t{1} << shift) - 1);
    key_high = bucket_high < set.cut_key ? bucket_high : set.cut_key;
    if (num_matching <= static_cast<uint32_t>(kListCapacity)) continue;
    shift -= min(kDigitBits, shift);
    unsigned long long unused_mass;
    histogram(storage, row, set, key_low, key_high, shift, unused_mass, num_matching);
  }
}

}  // namespace sluice::kernels::sampling_detail
