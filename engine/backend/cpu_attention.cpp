#include "engine/backend/cpu_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace sluice {

namespace {

// Request index of every token, from query_start_loc.
std::vector<int32_t> token_request_indices(const BatchInputs& inputs) {
  std::vector<int32_t> out(static_cast<size_t>(inputs.num_tokens()));
  for (int r = 0; r < inputs.num_requests(); ++r) {
    for (int t = inputs.query_start_loc[r]; t < inputs.query_start_loc[r + 1]; ++t) out[static_cast<size_t>(t)] = r;
  }
  return out;
}

// One query head of one token against its context; scores is scratch of at least
// context_len floats.
void attend_one(const float* q, const int32_t* block_table, int context_len, int kv_head, const AttentionShape& s,
                const float* k_cache, const float* v_cache, float* scores, float* out) {
  const int hd = s.head_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  float max_score = -std::numeric_limits<float>::infinity();
  for (int j = 0; j < context_len; ++j) {
    const int64_t slot = static_cast<int64_t>(block_table[j / s.block_size]) * s.block_size + j % s.block_size;
    const float* k = k_cache + (slot * s.num_kv_heads + kv_head) * hd;
    float dot = 0.0f;
    for (int d = 0; d < hd; ++d) dot += q[d] * k[d];
    scores[j] = dot * scale;
    max_score = std::max(max_score, scores[j]);
  }
  float sum = 0.0f;
  for (int j = 0; j < context_len; ++j) {
    scores[j] = std::exp(scores[j] - max_score);
    sum += scores[j];
  }
  std::memset(out, 0, sizeof(float) * static_cast<size_t>(hd));
  for (int j = 0; j < context_len; ++j) {
    const int64_t slot = static_cast<int64_t>(block_table[j / s.block_size]) * s.block_size + j % s.block_size;
    const float* v = v_cache + (slot * s.num_kv_heads + kv_head) * hd;
    const float p = scores[j];
    for (int d = 0; d < hd; ++d) out[d] += p * v[d];
  }
  const float inv_sum = 1.0f / sum;
  for (int d = 0; d < hd; ++d) out[d] *= inv_sum;
}

}  // namespace

void write_kv_cache(const BatchInputs& inputs, const AttentionShape& shape, const float* k, const float* v,
                    float* k_cache, float* v_cache) {
  const int64_t kv_size = static_cast<int64_t>(shape.num_kv_heads) * shape.head_dim;
  for (int t = 0; t < inputs.num_tokens(); ++t) {
    const int64_t slot = inputs.slot_mapping[static_cast<size_t>(t)];
    std::memcpy(k_cache + slot * kv_size, k + t * kv_size, sizeof(float) * static_cast<size_t>(kv_size));
    std::memcpy(v_cache + slot * kv_size, v + t * kv_size, sizeof(float) * static_cast<size_t>(kv_size));
  }
}

void paged_attention(const BatchInputs& inputs, const AttentionShape& shape, const float* q, const float* k_cache,
                     const float* v_cache, float* out, ThreadPool& pool) {
  const std::vector<int32_t> request_of = token_request_indices(inputs);
  const int max_context = inputs.num_requests() == 0 ? 0 : *std::max_element(inputs.seq_lens.begin(), inputs.seq_lens.end());
  const int group = shape.num_heads / shape.num_kv_heads;
  const int64_t q_size = static_cast<int64_t>(shape.num_heads) * shape.head_dim;
  const int64_t num_items = static_cast<int64_t>(inputs.num_tokens()) * shape.num_heads;
  pool.parallel_for(num_items, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(static_cast<size_t>(max_context));
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / shape.num_heads;
      const int h = static_cast<int>(item % shape.num_heads);
      const int r = request_of[static_cast<size_t>(t)];
      const int context_len = inputs.positions[static_cast<size_t>(t)] + 1;
      attend_one(q + t * q_size + h * shape.head_dim, inputs.block_table(r), context_len, h / group, shape, k_cache,
                 v_cache, scores.data(), out + t * q_size + h * shape.head_dim);
    }
  }, 4);
}

}  // namespace sluice
