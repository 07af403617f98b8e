// Paged attention against a float64 reference over contiguous K/V, on odd shapes: head sizes
// with and without a compile-time kernel, GQA groups of 1 to 7, block sizes 16 and 5, contexts
// of 1 to 150 tokens, prefill chunks and decodes mixed in one batch, scattered block tables.
#include "engine/backend/cpu_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace sluice {
namespace {

struct Case {
  int num_heads, num_kv_heads, head_dim, block_size;
};

struct RequestSpec {
  int context_len;  // positions after this step
  int num_new;      // tokens computed this step (the last num_new positions)
};

class PagedAttention : public ::testing::TestWithParam<Case> {};

TEST_P(PagedAttention, MatchesFloat64Reference) {
  const Case c = GetParam();
  const std::vector<RequestSpec> requests = {{1, 1},  {17, 17}, {150, 1},
                                             {40, 9}, {16, 1},  {33, 33}};
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int kv_size = c.num_kv_heads * c.head_dim, q_size = c.num_heads * c.head_dim;
  int total_blocks = 0;
  for (const auto& r : requests) total_blocks += (r.context_len + c.block_size - 1) / c.block_size;
  const int num_blocks = total_blocks + 3;
  // Scatter: request blocks are taken from a shuffled list of physical ids.
  std::vector<int32_t> physical(static_cast<size_t>(num_blocks));
  for (int i = 0; i < num_blocks; ++i) physical[static_cast<size_t>(i)] = i;
  std::shuffle(physical.begin(), physical.end(), rng);

  std::vector<float> k_cache(static_cast<size_t>(num_blocks) * c.block_size * kv_size, 0.0f),
      v_cache(k_cache.size());
  BatchInputs in;
  std::vector<std::vector<float>> keys, values;  // [request][position * kv_size + ...]
  std::vector<float> new_k, new_v, q;
  size_t next_block = 0;
  for (const auto& r : requests)
    in.max_blocks_per_request =
        std::max(in.max_blocks_per_request, (r.context_len + c.block_size - 1) / c.block_size);
  in.query_start_loc.push_back(0);
  for (const auto& r : requests) {
    const int blocks = (r.context_len + c.block_size - 1) / c.block_size;
    std::vector<int32_t> table;
    for (int b = 0; b < blocks; ++b) table.push_back(physical[next_block++]);
    table.resize(static_cast<size_t>(in.max_blocks_per_request), -1);
    in.block_tables.insert(in.block_tables.end(), table.begin(), table.end());
    std::vector<float> rk(static_cast<size_t>(r.context_len) * kv_size), rv(rk.size());
    for (auto& x : rk) x = u(rng);
    for (auto& x : rv) x = u(rng);
    // Old positions are written through a first batch; new ones come with this step.
    BatchInputs old;
    old.max_blocks_per_request = in.max_blocks_per_request;
    for (int p = 0; p < r.context_len; ++p) {
      const int64_t slot =
          static_cast<int64_t>(table[static_cast<size_t>(p / c.block_size)]) * c.block_size +
          p % c.block_size;
      if (p < r.context_len - r.num_new) {
        old.slot_mapping.push_back(slot);
        old.token_ids.push_back(0);
      } else {
        in.slot_mapping.push_back(slot);
        in.positions.push_back(p);
        in.token_ids.push_back(0);
        new_k.insert(new_k.end(), rk.begin() + p * kv_size, rk.begin() + (p + 1) * kv_size);
        new_v.insert(new_v.end(), rv.begin() + p * kv_size, rv.begin() + (p + 1) * kv_size);
        for (int i = 0; i < q_size; ++i) q.push_back(u(rng));
      }
    }
    const AttentionShape shape{c.num_heads, c.num_kv_heads, c.head_dim, c.block_size};
    write_kv_cache(old, shape, rk.data(), rv.data(), k_cache.data(), v_cache.data());
    in.query_start_loc.push_back(static_cast<int32_t>(in.token_ids.size()));
    in.seq_lens.push_back(r.context_len);
    keys.push_back(std::move(rk));
    values.push_back(std::move(rv));
  }
  const AttentionShape shape{c.num_heads, c.num_kv_heads, c.head_dim, c.block_size};
  write_kv_cache(in, shape, new_k.data(), new_v.data(), k_cache.data(), v_cache.data());
  std::vector<float> out(q.size());
  ThreadPool pool(2);
  paged_attention(in, shape, q.data(), k_cache.data(), v_cache.data(), out.data(), pool);

  const int group = c.num_heads / c.num_kv_heads;
  for (size_t r = 0; r < requests.size(); ++r) {
    for (int t = in.query_start_loc[r]; t < in.query_start_loc[r + 1]; ++t) {
      const int pos = in.positions[static_cast<size_t>(t)];
      for (int h = 0; h < c.num_heads; ++h) {
        const int g = h / group;
        std::vector<double> scores(static_cast<size_t>(pos + 1));
        double max_score = -1e300, sum = 0;
        for (int j = 0; j <= pos; ++j) {
          double dot = 0;
          for (int d = 0; d < c.head_dim; ++d) {
            dot += static_cast<double>(q[static_cast<size_t>(t) * q_size + h * c.head_dim + d]) *
                   keys[r][static_cast<size_t>(j) * kv_size + g * c.head_dim + d];
          }
          scores[static_cast<size_t>(j)] = dot / std::sqrt(static_cast<double>(c.head_dim));
          max_score = std::max(max_score, scores[static_cast<size_t>(j)]);
        }
        for (auto& s : scores) sum += (s = std::exp(s - max_score));
        for (int d = 0; d < c.head_dim; ++d) {
          double expected = 0;
          for (int j = 0; j <= pos; ++j) {
            expected += scores[static_cast<size_t>(j)] / sum *
                        values[r][static_cast<size_t>(j) * kv_size + g * c.head_dim + d];
          }
          const float got = out[static_cast<size_t>(t) * q_size + h * c.head_dim + d];
          ASSERT_NEAR(got, expected, 1e-5 + 1e-5 * std::fabs(expected))
              << "request " << r << " token " << t << " head " << h << " dim " << d;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, PagedAttention,
                         ::testing::Values(Case{8, 4, 8, 16},    // stories260K
                                           Case{4, 4, 16, 16},   // MHA, compiled size
                                           Case{14, 2, 64, 16},  // group of 7
                                           Case{4, 1, 128, 16},  // group of 4, large heads
                                           Case{6, 3, 12, 16},   // head size without a kernel
                                           Case{8, 2, 64, 5},    // odd block size
                                           Case{8, 4, 8, 8},     // compiled block sizes 8 and 32
                                           Case{4, 2, 128, 32},
                                           Case{3, 3, 40, 7}));

}  // namespace
}  // namespace sluice
