#include "engine/backend/cpu_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/backend/cpu_math.h"

namespace sluice {

namespace {

// Request index of every token, from query_start_loc.
std::vector<int32_t> token_request_indices(const BatchInputs& inputs) {
  std::vector<int32_t> out(static_cast<size_t>(inputs.num_tokens()));
  for (int r = 0; r < inputs.num_requests(); ++r) {
    for (int t = inputs.query_start_loc[r]; t < inputs.query_start_loc[r + 1]; ++t)
      out[static_cast<size_t>(t)] = r;
  }
  return out;
}

struct GroupTask {
  const float* q;              // [group, head_dim] query heads sharing one KV head
  const int32_t* block_table;  // the request's blocks
  int context_len;             // positions 0..context_len - 1 are attended
  int kv_head;
  int group;
  float* scores;  // scratch [group, context_len rounded up to block_size]
  float* out;     // [group, head_dim]
};

// Eight floats as one vector (GCC/Clang vector extension): the loops below say exactly which
// lanes are combined, so the order of every sum is fixed by the code, not by the optimiser.
using Float8 = float __attribute__((vector_size(32)));

SLUICE_ALWAYS_INLINE Float8 load8(const float* p) {
  Float8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

SLUICE_ALWAYS_INLINE void store8(float* p, Float8 v) {
  std::memcpy(p, &v, sizeof v);
}

// Scores of one block's kBlockSize positions for kHeads query heads at once (independent FMA
// chains): acc[h][o] = sum_d q[h][d] * K[d][o], d in order; the positions are the lanes.
template <int kHeadDim, int kBlockSize, int kHeads>
SLUICE_ALWAYS_INLINE void block_scores(const float* q, const float* kt, float scale, float* scores,
                                       int stride) {
  constexpr int kVectors = kBlockSize / 8;
  Float8 acc[kHeads][kVectors] = {};
  for (int d = 0; d < kHeadDim; ++d) {
    for (int v = 0; v < kVectors; ++v) {
      const Float8 k = load8(kt + d * kBlockSize + v * 8);
      for (int h = 0; h < kHeads; ++h) acc[h][v] += q[h * kHeadDim + d] * k;
    }
  }
  for (int h = 0; h < kHeads; ++h) {
    for (int v = 0; v < kVectors; ++v) store8(scores + h * stride + v * 8, acc[h][v] * scale);
  }
}

// out[d] = sum over positions of p[o] * V[o][d]; the dimensions are the lanes. Positions go to
// kChains accumulators by o % kChains (so consecutive FMAs do not wait on each other), which
// are added in a fixed tree at the end.
template <int kHeadDim, int kBlockSize>
SLUICE_ALWAYS_INLINE void accumulate_values(const float* p, const float* const* value_blocks,
                                            int num_blocks, int context_len, float* out) {
  constexpr int kVectors = kHeadDim / 8;
  constexpr int kChains = kVectors >= 4 ? 1 : 4 / kVectors;
  static_assert(kBlockSize % kChains == 0);
  Float8 acc[kChains][kVectors] = {};
  const int num_full_blocks = context_len / kBlockSize;
  for (int b = 0; b < num_full_blocks; ++b) {  // constant trip counts: fully unrolled
    const float* vb = value_blocks[b];
    for (int o = 0; o < kBlockSize; ++o) {
      const float weight = p[b * kBlockSize + o];
      for (int v = 0; v < kVectors; ++v)
        acc[o % kChains][v] += weight * load8(vb + o * kHeadDim + v * 8);
    }
  }
  for (int b = num_full_blocks; b < num_blocks; ++b) {  // the partial last block
    const float* vb = value_blocks[b];
    for (int o = 0; o < context_len - b * kBlockSize; ++o) {
      const float weight = p[b * kBlockSize + o];
      for (int v = 0; v < kVectors; ++v)
        acc[o % kChains][v] += weight * load8(vb + o * kHeadDim + v * 8);
    }
  }
  for (int v = 0; v < kVectors; ++v) {
    Float8 total = acc[0][v];
    if constexpr (kChains == 2) total += acc[1][v];
    if constexpr (kChains == 4) total = (acc[0][v] + acc[1][v]) + (acc[2][v] + acc[3][v]);
    store8(out + v * 8, total);
  }
}

// Softmax of one row of scores in place, in position order.
SLUICE_ALWAYS_INLINE void softmax_row(float* __restrict row, int n) {
  const float max_score = lane_max(row, n);
  for (int j = 0; j < n; ++j) row[j] = fast_exp(row[j] - max_score);
  const float inv_sum = 1.0f / lane_sum(row, n);
  for (int j = 0; j < n; ++j) row[j] *= inv_sum;
}

// One token's query heads of one KV head, for head and block sizes that are multiples of 8 and
// known at compile time (the one place runtime sizes become constants is attend_for).
template <int kHeadDim, int kBlockSize>
SLUICE_CPU_CLONES void attend_kv_group(const GroupTask& task, const AttentionShape& s,
                                       const float* k_cache, const float* v_cache) {
  const int num_blocks = (task.context_len + kBlockSize - 1) / kBlockSize;
  const int stride = num_blocks * kBlockSize;
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  const int64_t block_floats = static_cast<int64_t>(s.num_kv_heads) * kHeadDim * kBlockSize;
  const int64_t head_offset = static_cast<int64_t>(task.kv_head) * kHeadDim * kBlockSize;
  thread_local std::vector<const float*> value_blocks;
  value_blocks.resize(static_cast<size_t>(num_blocks));
  for (int b = 0; b < num_blocks; ++b) {
    const int64_t base = task.block_table[b] * block_floats + head_offset;
    if (b + 1 < num_blocks)
      __builtin_prefetch(k_cache + task.block_table[b + 1] * block_floats + head_offset);
    value_blocks[static_cast<size_t>(b)] = v_cache + base;
    __builtin_prefetch(v_cache + base);
    int h = 0;
    for (; h + 4 <= task.group; h += 4) {
      block_scores<kHeadDim, kBlockSize, 4>(task.q + h * kHeadDim, k_cache + base, scale,
                                            task.scores + h * stride + b * kBlockSize, stride);
    }
    for (; h + 2 <= task.group; h += 2) {
      block_scores<kHeadDim, kBlockSize, 2>(task.q + h * kHeadDim, k_cache + base, scale,
                                            task.scores + h * stride + b * kBlockSize, stride);
    }
    for (; h < task.group; ++h) {
      block_scores<kHeadDim, kBlockSize, 1>(task.q + h * kHeadDim, k_cache + base, scale,
                                            task.scores + h * stride + b * kBlockSize, stride);
    }
  }
  for (int h = 0; h < task.group; ++h) {
    softmax_row(task.scores + h * stride, task.context_len);
    accumulate_values<kHeadDim, kBlockSize>(task.scores + h * stride, value_blocks.data(),
                                            num_blocks, task.context_len, task.out + h * kHeadDim);
  }
}

// Any head and block size, read at run time: the same sums in the same order.
void attend_kv_group_generic(const GroupTask& task, const AttentionShape& s, const float* k_cache,
                             const float* v_cache) {
  const int hd = s.head_dim, bs = s.block_size;
  const int num_blocks = (task.context_len + bs - 1) / bs;
  const int stride = num_blocks * bs;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const int64_t block_floats = static_cast<int64_t>(s.num_kv_heads) * hd * bs;
  const int64_t head_offset = static_cast<int64_t>(task.kv_head) * hd * bs;
  for (int h = 0; h < task.group; ++h) {
    float* row = task.scores + h * stride;
    for (int b = 0; b < num_blocks; ++b) {
      const float* kt = k_cache + task.block_table[b] * block_floats + head_offset;
      for (int o = 0; o < bs; ++o) {
        float acc = 0.0f;
        for (int d = 0; d < hd; ++d) acc += task.q[h * hd + d] * kt[d * bs + o];
        row[b * bs + o] = acc * scale;
      }
    }
    softmax_row(row, task.context_len);
    float* dst = task.out + h * hd;
    for (int d = 0; d < hd; ++d) dst[d] = 0.0f;
    for (int j = 0; j < task.context_len; ++j) {
      const float* v =
          v_cache + task.block_table[j / bs] * block_floats + head_offset + (j % bs) * hd;
      for (int d = 0; d < hd; ++d) dst[d] += row[j] * v[d];
    }
  }
}

using AttendFn = void (*)(const GroupTask&, const AttentionShape&, const float*, const float*);

template <int kBlockSize>
AttendFn attend_for_head_dim(int head_dim) {
  switch (head_dim) {
    case 8: return &attend_kv_group<8, kBlockSize>;
    case 16: return &attend_kv_group<16, kBlockSize>;
    case 32: return &attend_kv_group<32, kBlockSize>;
    case 64: return &attend_kv_group<64, kBlockSize>;
    case 80: return &attend_kv_group<80, kBlockSize>;
    case 96: return &attend_kv_group<96, kBlockSize>;
    case 128: return &attend_kv_group<128, kBlockSize>;
    default: return &attend_kv_group_generic;
  }
}

// The one place head and block sizes become compile-time constants.
AttendFn attend_for(int head_dim, int block_size) {
  switch (block_size) {
    case 8: return attend_for_head_dim<8>(head_dim);
    case 16: return attend_for_head_dim<16>(head_dim);
    case 32: return attend_for_head_dim<32>(head_dim);
    default: return &attend_kv_group_generic;
  }
}

}  // namespace

void write_kv_cache(const BatchInputs& inputs, const AttentionShape& shape, const float* k,
                    const float* v, float* k_cache, float* v_cache) {
  const int hd = shape.head_dim, bs = shape.block_size;
  const int64_t kv_size = static_cast<int64_t>(shape.num_kv_heads) * hd;
  for (int t = 0; t < inputs.num_tokens(); ++t) {
    const int64_t slot = inputs.slot_mapping[static_cast<size_t>(t)];
    const int64_t block = slot / bs, offset = slot % bs;
    float* kb = k_cache + block * kv_size * bs;
    float* vb = v_cache + block * kv_size * bs;
    for (int g = 0; g < shape.num_kv_heads; ++g) {
      const float* k_src = k + t * kv_size + static_cast<int64_t>(g) * hd;
      for (int d = 0; d < hd; ++d) kb[(static_cast<int64_t>(g) * hd + d) * bs + offset] = k_src[d];
      std::memcpy(vb + (static_cast<int64_t>(g) * bs + offset) * hd,
                  v + t * kv_size + static_cast<int64_t>(g) * hd,
                  sizeof(float) * static_cast<size_t>(hd));
    }
  }
}

void paged_attention(const BatchInputs& inputs, const AttentionShape& shape, const float* q,
                     const float* k_cache, const float* v_cache, float* out, ThreadPool& pool) {
  const std::vector<int32_t> request_of = token_request_indices(inputs);
  const int max_context = inputs.num_requests() == 0
                              ? 0
                              : *std::max_element(inputs.seq_lens.begin(), inputs.seq_lens.end());
  const int group = shape.num_heads / shape.num_kv_heads;
  const int64_t q_size = static_cast<int64_t>(shape.num_heads) * shape.head_dim;
  const int64_t num_items = static_cast<int64_t>(inputs.num_tokens()) * shape.num_kv_heads;
  const size_t scratch_floats = static_cast<size_t>((max_context + shape.block_size - 1) /
                                                    shape.block_size * shape.block_size) *
                                static_cast<size_t>(group);
  const AttendFn attend = attend_for(shape.head_dim, shape.block_size);
  pool.parallel_for(
      num_items,
      [&](int64_t begin, int64_t end) {
        thread_local std::vector<float> scores;  // keeps its capacity across steps
        if (scores.size() < scratch_floats) scores.resize(scratch_floats);
        for (int64_t item = begin; item < end; ++item) {
          const int64_t t = item / shape.num_kv_heads;
          const int kv_head = static_cast<int>(item % shape.num_kv_heads);
          const int64_t head_offset =
              t * q_size + static_cast<int64_t>(kv_head) * group * shape.head_dim;
          const GroupTask task{q + head_offset,
                               inputs.block_table(request_of[static_cast<size_t>(t)]),
                               inputs.positions[static_cast<size_t>(t)] + 1,
                               kv_head,
                               group,
                               scores.data(),
                               out + head_offset};
          attend(task, shape, k_cache, v_cache);
        }
      },
      4);
}

}  // namespace sluice
