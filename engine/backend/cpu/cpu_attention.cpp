#include "engine/backend/cpu/cpu_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/backend/cpu/cpu_math.h"
#include "engine/core/error.h"
#include "engine/core/fp8_e4m3.h"

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
  int first_position;          // positions first_position..context_len - 1 are attended
  int context_len;
  int kv_head;
  int group;
  float* scores;       // scratch [group, blocks spanned by the positions * block_size]
  float* out;          // [group, head_dim]
  const float* sinks;  // [group] the query heads' sink logits, or nullptr

  float sink(int h) const { return sinks ? sinks[h] : -std::numeric_limits<float>::infinity(); }
};

// The blocks a task reads: [first_block, end_block), and its scores' row stride.
struct BlockSpan {
  int first_block;
  int num_blocks;
  int stride;  // num_blocks * block_size

  BlockSpan(const GroupTask& task, int block_size)
      : first_block(task.first_position / block_size),
        num_blocks((task.context_len + block_size - 1) / block_size - first_block),
        stride(num_blocks * block_size) {}
};

// Eight floats as one vector (GCC/Clang vector extension): the loops below say exactly which
// lanes are combined, so the order of every sum is fixed by the code, not by the optimiser.
using Float8 = float __attribute__((vector_size(32)));

// The vector kernels take head sizes that are multiples of 8 up to this; a head size without
// a compiled instantiation reads it at run time (kHeadDim == 0).
constexpr int kMaxVectorHeadDim = 256;

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
// kHeadDim == 0: head_dim is read at run time.
template <int kHeadDim, int kBlockSize, int kHeads>
SLUICE_ALWAYS_INLINE void block_scores(const float* q, const float* kt, float scale, float* scores,
                                       int stride, int head_dim) {
  constexpr int kVectors = kBlockSize / 8;
  const int hd = kHeadDim > 0 ? kHeadDim : head_dim;
  Float8 acc[kHeads][kVectors] = {};
  for (int d = 0; d < hd; ++d) {
    for (int v = 0; v < kVectors; ++v) {
      const Float8 k = load8(kt + d * kBlockSize + v * 8);
      for (int h = 0; h < kHeads; ++h) acc[h][v] += q[h * hd + d] * k;
    }
  }
  for (int h = 0; h < kHeads; ++h) {
    for (int v = 0; v < kVectors; ++v) store8(scores + h * stride + v * 8, acc[h][v] * scale);
  }
}

// acc[o % kChains][v] += p[o] * V[o][v * 8 ..] for the positions o_begin..o_end - 1 of a block.
template <int kChains, int kVectors>
SLUICE_ALWAYS_INLINE void add_weighted_values(Float8 (&acc)[kChains][kVectors], const float* p,
                                              const float* vb, int o_begin, int o_end,
                                              int num_vectors, int head_dim) {
  for (int o = o_begin; o < o_end; ++o) {
    const float weight = p[o];
    for (int v = 0; v < num_vectors; ++v)
      acc[o % kChains][v] += weight * load8(vb + o * head_dim + v * 8);
  }
}

// out[d] = sum over positions of p[o] * V[o][d]; the dimensions are the lanes. p and
// value_blocks start at the first spanned block; the positions begin..end - 1 (offsets from
// that block's start) are summed. Positions go to kChains accumulators by their offset in the
// block (so consecutive FMAs do not wait on each other), which are added in a fixed tree at the
// end. kHeadDim == 0: head_dim is read at run time.
template <int kHeadDim, int kBlockSize>
SLUICE_ALWAYS_INLINE void accumulate_values(const float* p, const float* const* value_blocks,
                                            int begin, int end, int head_dim, float* out) {
  constexpr int kVectors = (kHeadDim > 0 ? kHeadDim : kMaxVectorHeadDim) / 8;
  constexpr int kChains = kHeadDim == 0 || kVectors >= 4 ? 1 : 4 / kVectors;
  static_assert(kBlockSize % kChains == 0);
  const int hd = kHeadDim > 0 ? kHeadDim : head_dim;
  const int num_vectors = hd / 8;
  Float8 acc[kChains][kVectors] = {};
  int b = 0;
  if (begin > 0) {  // the window starts inside the first block
    add_weighted_values(acc, p, value_blocks[0], begin, std::min(end, kBlockSize), num_vectors, hd);
    b = 1;
  }
  for (; (b + 1) * kBlockSize <= end; ++b) {  // constant trip counts: fully unrolled
    add_weighted_values(acc, p + b * kBlockSize, value_blocks[b], 0, kBlockSize, num_vectors, hd);
  }
  if (b * kBlockSize < end) {  // the partial last block
    add_weighted_values(acc, p + b * kBlockSize, value_blocks[b], 0, end - b * kBlockSize,
                        num_vectors, hd);
  }
  for (int v = 0; v < num_vectors; ++v) {
    Float8 total = acc[0][v];
    if constexpr (kChains == 2) total += acc[1][v];
    if constexpr (kChains == 4) total = (acc[0][v] + acc[1][v]) + (acc[2][v] + acc[3][v]);
    store8(out + v * 8, total);
  }
}

// Soft-caps (cap > 0) and softmaxes one row of scores in place, in position order. A finite
// `sink` joins the softmax as one more logit whose probability is dropped (attention sinks).
SLUICE_ALWAYS_INLINE void softmax_row(float* __restrict row, int n, float logit_softcap,
                                      float sink) {
  if (logit_softcap > 0.0f) {
    for (int j = 0; j < n; ++j) row[j] = logit_softcap * std::tanh(row[j] / logit_softcap);
  }
  const float max_score = std::max(lane_max(row, n), sink);
  for (int j = 0; j < n; ++j) row[j] = fast_exp(row[j] - max_score);
  const float sink_weight = std::isfinite(sink) ? std::exp(sink - max_score) : 0.0f;
  const float inv_sum = 1.0f / (lane_sum(row, n) + sink_weight);
  for (int j = 0; j < n; ++j) row[j] *= inv_sum;
}

// One token's query heads of one KV head, for block sizes that are multiples of 8 and head
// sizes that are multiples of 8 up to kMaxVectorHeadDim: compile-time constants, or read at
// run time when kHeadDim == 0 (the one place runtime sizes become constants is attend_for).
template <int kHeadDim, int kBlockSize>
SLUICE_CPU_CLONES void attend_kv_group(const GroupTask& task, const AttentionShape& s,
                                       const AttentionOptions& options, const float* k_cache,
                                       const float* v_cache) {
  const int hd = kHeadDim > 0 ? kHeadDim : s.head_dim;
  const BlockSpan span(task, kBlockSize);
  const int64_t block_floats = static_cast<int64_t>(s.num_kv_heads) * hd * kBlockSize;
  const int64_t head_offset = static_cast<int64_t>(task.kv_head) * hd * kBlockSize;
  const int32_t* blocks = task.block_table + span.first_block;
  const int stride = span.stride;
  thread_local std::vector<const float*> value_blocks;
  value_blocks.resize(static_cast<size_t>(span.num_blocks));
  for (int b = 0; b < span.num_blocks; ++b) {
    const int64_t base = blocks[b] * block_floats + head_offset;
    if (b + 1 < span.num_blocks)
      __builtin_prefetch(k_cache + blocks[b + 1] * block_floats + head_offset);
    value_blocks[static_cast<size_t>(b)] = v_cache + base;
    __builtin_prefetch(v_cache + base);
    float* scores = task.scores + b * kBlockSize;
    int h = 0;
    for (; h + 4 <= task.group; h += 4) {
      block_scores<kHeadDim, kBlockSize, 4>(task.q + h * hd, k_cache + base, options.scale,
                                            scores + h * stride, stride, hd);
    }
    for (; h + 2 <= task.group; h += 2) {
      block_scores<kHeadDim, kBlockSize, 2>(task.q + h * hd, k_cache + base, options.scale,
                                            scores + h * stride, stride, hd);
    }
    for (; h < task.group; ++h) {
      block_scores<kHeadDim, kBlockSize, 1>(task.q + h * hd, k_cache + base, options.scale,
                                            scores + h * stride, stride, hd);
    }
  }
  const int begin = task.first_position - span.first_block * kBlockSize;
  const int end = task.context_len - span.first_block * kBlockSize;
  for (int h = 0; h < task.group; ++h) {
    float* row = task.scores + h * stride;
    softmax_row(row + begin, end - begin, options.logit_softcap, task.sink(h));
    accumulate_values<kHeadDim, kBlockSize>(row, value_blocks.data(), begin, end, hd,
                                            task.out + h * hd);
  }
}

// Any head and block size, read at run time: plain loops over the visible positions.
void attend_kv_group_generic(const GroupTask& task, const AttentionShape& s,
                             const AttentionOptions& options, const float* k_cache,
                             const float* v_cache) {
  const int hd = s.head_dim, bs = s.block_size;
  const int n = task.context_len - task.first_position;
  const int64_t block_floats = static_cast<int64_t>(s.num_kv_heads) * hd * bs;
  const int64_t head_offset = static_cast<int64_t>(task.kv_head) * hd * bs;
  for (int h = 0; h < task.group; ++h) {
    float* row = task.scores + h * n;  // scratch holds at least group * n floats
    for (int j = task.first_position; j < task.context_len; ++j) {
      const float* kt = k_cache + task.block_table[j / bs] * block_floats + head_offset + j % bs;
      float acc = 0.0f;
      for (int d = 0; d < hd; ++d) acc += task.q[h * hd + d] * kt[d * bs];
      row[j - task.first_position] = acc * options.scale;
    }
    softmax_row(row, n, options.logit_softcap, task.sink(h));
    float* dst = task.out + h * hd;
    for (int d = 0; d < hd; ++d) dst[d] = 0.0f;
    for (int j = task.first_position; j < task.context_len; ++j) {
      const float* v =
          v_cache + task.block_table[j / bs] * block_floats + head_offset + (j % bs) * hd;
      for (int d = 0; d < hd; ++d) dst[d] += row[j - task.first_position] * v[d];
    }
  }
}

using AttendFn = void (*)(const GroupTask&, const AttentionShape&, const AttentionOptions&,
                          const float*, const float*);

// Compiled head sizes: the common ones, 48 (stories15M) and 256 (Gemma 2 and 3).
template <int kBlockSize>
AttendFn attend_for_head_dim(int head_dim) {
  switch (head_dim) {
    case 8: return &attend_kv_group<8, kBlockSize>;
    case 16: return &attend_kv_group<16, kBlockSize>;
    case 32: return &attend_kv_group<32, kBlockSize>;
    case 48:
      return &attend_kv_group<48, kBlockSize>;
    case 64: return &attend_kv_group<64, kBlockSize>;
    case 80: return &attend_kv_group<80, kBlockSize>;
    case 96: return &attend_kv_group<96, kBlockSize>;
    case 128: return &attend_kv_group<128, kBlockSize>;
    case 256:
      return &attend_kv_group<256, kBlockSize>;
    default:
      return head_dim % 8 == 0 && head_dim <= kMaxVectorHeadDim ? &attend_kv_group<0, kBlockSize>
                                                                : &attend_kv_group_generic;
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

// The first position a query at `position` sees.
int first_visible_position(int position, int sliding_window) {
  return sliding_window > 0 ? std::max(0, position - sliding_window + 1) : 0;
}

void check_options(const AttentionShape& shape, const AttentionOptions& options) {
  if (shape.num_heads < 1 || shape.num_kv_heads < 1 || shape.head_dim < 1 || shape.block_size < 1 ||
      shape.num_heads % shape.num_kv_heads != 0) {
    fail("attention: bad shape (", shape.num_heads, " heads, ", shape.num_kv_heads,
         " KV heads, head_dim ", shape.head_dim, ", block size ", shape.block_size, ")");
  }
  if (!std::isfinite(options.scale) || options.scale <= 0.0f)
    fail("attention: scale must be a positive finite number, got ", options.scale);
  if (!std::isfinite(options.logit_softcap) || options.logit_softcap < 0.0f)
    fail("attention: logit_softcap must be 0 (off) or positive, got ", options.logit_softcap);
  if (options.sliding_window < 0)
    fail("attention: sliding_window must be 0 (off) or positive, got ", options.sliding_window);
}

// Every block a request's tokens see must be in its table: a kNoBlock (or a table too short)
// inside a window would read outside the pool. Returns the most blocks one token's positions
// span (the scratch a task needs per query head).
int check_block_tables(const BatchInputs& inputs, const AttentionShape& shape,
                       const AttentionOptions& options) {
  const int bs = shape.block_size;
  int max_span_blocks = 0;
  for (int r = 0; r < inputs.num_requests(); ++r) {
    const int token_begin = inputs.query_start_loc[static_cast<size_t>(r)];
    const int token_end = inputs.query_start_loc[static_cast<size_t>(r) + 1];
    if (token_begin == token_end) continue;
    int first_position = std::numeric_limits<int>::max(), context_len = 0;
    for (int t = token_begin; t < token_end; ++t) {
      const int position = inputs.positions[static_cast<size_t>(t)];
      const int first = first_visible_position(position, options.sliding_window);
      first_position = std::min(first_position, first);
      context_len = std::max(context_len, position + 1);
      max_span_blocks = std::max(max_span_blocks, (position / bs) - (first / bs) + 1);
    }
    const int end_block = (context_len + bs - 1) / bs;
    if (end_block > inputs.max_blocks_per_request) {
      fail("attention: request ", r, " of the batch reaches position ", context_len - 1,
           " but its block table has ", inputs.max_blocks_per_request, " blocks of ", bs);
    }
    const int32_t* table = inputs.block_table(r);
    for (int b = first_position / bs; b < end_block; ++b) {
      if (table[b] < 0) {
        fail("attention: request ", r, " of the batch has no block at table entry ", b,
             " (positions ", b * bs, "..", (b + 1) * bs - 1, "), which its queries see");
      }
    }
  }
  return max_span_blocks;
}

}  // namespace

void round_rows_to_fp8(float* rows, int64_t num_rows, int row_size) {
  for (int64_t r = 0; r < num_rows; ++r) {
    float* row = rows + r * row_size;
    float amax = 0.0f;
    for (int i = 0; i < row_size; ++i) amax = std::max(amax, std::fabs(row[i]));
    const float scale = fp8_e4m3_scale(amax);
    for (int i = 0; i < row_size; ++i)
      row[i] = fp8_e4m3_to_float(fp8_e4m3_quantize(row[i], amax)) * scale;
  }
}

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

AttentionOptions causal_attention_options(int head_dim) {
  return AttentionOptions{.scale = 1.0f / std::sqrt(static_cast<float>(head_dim))};
}

void paged_attention(const BatchInputs& inputs, const AttentionShape& shape,
                     const AttentionOptions& options, const float* q, const float* k_cache,
                     const float* v_cache, float* out, ThreadPool& pool, const float* sinks) {
  check_options(shape, options);
  const int max_span_blocks = check_block_tables(inputs, shape, options);
  const std::vector<int32_t> request_of = token_request_indices(inputs);
  const int group = shape.num_heads / shape.num_kv_heads;
  const int64_t q_size = static_cast<int64_t>(shape.num_heads) * shape.head_dim;
  const int64_t num_items = static_cast<int64_t>(inputs.num_tokens()) * shape.num_kv_heads;
  const size_t scratch_floats = static_cast<size_t>(max_span_blocks) *
                                static_cast<size_t>(shape.block_size) * static_cast<size_t>(group);
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
          const int position = inputs.positions[static_cast<size_t>(t)];
          const GroupTask task{q + head_offset,
                               inputs.block_table(request_of[static_cast<size_t>(t)]),
                               first_visible_position(position, options.sliding_window),
                               position + 1,
                               kv_head,
                               group,
                               scores.data(),
                               out + head_offset,
                               sinks ? sinks + kv_head * group : nullptr};
          attend(task, shape, options, k_cache, v_cache);
        }
      },
      4);
}

}  // namespace sluice
