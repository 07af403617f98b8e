// Paged attention against a float64 reference over contiguous K/V, on odd shapes: head sizes
// with a compiled kernel, with the run-time-sized vector kernel and with the scalar one, GQA
// groups of 1 to 7, block sizes 16, 8, 32, 7 and 5, contexts of 1 to 150 tokens, prefill chunks
// (first query position past 0) and decodes mixed in one batch, scattered block tables; each
// with the options of the layers models have: the plain causal scale, another scale, a logit
// soft-cap, and sliding windows smaller than, equal to, one past and larger than a block, and
// larger than every context. Blocks wholly outside every window of a request are kNoBlock (-1)
// in its table, and positions no query of the request sees hold NaN, so reading either
// poisons the output or faults (ASan). Tolerance: |got - ref| <= 1e-5 + 1e-5 * |ref|.
#include "engine/backend/cpu/cpu_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/core/error.h"

namespace sluice {
namespace {

struct AttentionCase {
  int num_heads, num_kv_heads, head_dim, block_size;
};

struct RequestSpec {
  int context_len;  // positions after this step
  int num_new;      // tokens computed this step (the last num_new positions)
};

const std::vector<RequestSpec> kRequests = {{1, 1},  {17, 17}, {150, 1},  {40, 9},
                                            {16, 1}, {33, 33}, {100, 37}, {64, 3}};

// A batch laid out as the CPU backend hands it over, with each request's logical K/V kept for
// the reference.
struct Batch {
  AttentionShape shape;
  BatchInputs inputs;
  std::vector<float> q;                          // [num_tokens, num_heads * head_dim]
  std::vector<float> k_cache, v_cache;           // one layer of the pool
  std::vector<std::vector<float>> keys, values;  // [request][position * kv_size + ...]
  std::vector<int> request_of_token;
};

int first_visible(int position, int window) {
  return window > 0 ? std::max(0, position - window + 1) : 0;
}

// Writes the requests' K/V through shuffled block tables; blocks that no query of a request sees
// are dropped from its table (kNoBlock) and point nowhere, positions none sees hold NaN.
Batch make_batch(const AttentionCase& c, const std::vector<RequestSpec>& requests, int window,
                 uint32_t seed, float q_scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Batch batch;
  batch.shape = AttentionShape{c.num_heads, c.num_kv_heads, c.head_dim, c.block_size};
  const int bs = c.block_size;
  const int kv_size = c.num_kv_heads * c.head_dim, q_size = c.num_heads * c.head_dim;
  int total_blocks = 0;
  BatchInputs& in = batch.inputs;
  for (const auto& r : requests) {
    const int blocks = (r.context_len + bs - 1) / bs;
    total_blocks += blocks;
    in.max_blocks_per_request = std::max(in.max_blocks_per_request, blocks);
  }
  const int num_blocks = total_blocks + 3;
  std::vector<int32_t> physical(static_cast<size_t>(num_blocks));
  for (int i = 0; i < num_blocks; ++i) physical[static_cast<size_t>(i)] = i;
  std::shuffle(physical.begin(), physical.end(), rng);
  batch.k_cache.assign(static_cast<size_t>(num_blocks) * bs * kv_size,
                       std::numeric_limits<float>::quiet_NaN());
  batch.v_cache.assign(batch.k_cache.size(), std::numeric_limits<float>::quiet_NaN());

  std::vector<float> new_k, new_v;
  size_t next_block = 0;
  in.query_start_loc.push_back(0);
  for (size_t r = 0; r < requests.size(); ++r) {
    const RequestSpec& spec = requests[r];
    const int first_query = spec.context_len - spec.num_new;
    const int first_seen = first_visible(first_query, window);
    std::vector<int32_t> table;
    for (int b = 0; b * bs < spec.context_len; ++b) {
      table.push_back(physical[next_block++]);
      if ((b + 1) * bs <= first_seen) table.back() = -1;  // wholly outside every window
    }
    table.resize(static_cast<size_t>(in.max_blocks_per_request), -1);
    in.block_tables.insert(in.block_tables.end(), table.begin(), table.end());
    std::vector<float> rk(static_cast<size_t>(spec.context_len) * kv_size), rv(rk.size());
    for (auto& x : rk) x = u(rng);
    for (auto& x : rv) x = u(rng);
    // Old positions that some query sees are written through a first batch; new ones come
    // with this step.
    BatchInputs old;
    std::vector<float> old_k, old_v;
    for (int p = first_seen; p < spec.context_len; ++p) {
      const int64_t slot = static_cast<int64_t>(table[static_cast<size_t>(p / bs)]) * bs + p % bs;
      const auto row = static_cast<size_t>(p) * kv_size;
      if (p < first_query) {
        old.slot_mapping.push_back(slot);
        old.token_ids.push_back(0);
        old_k.insert(old_k.end(), rk.begin() + row, rk.begin() + row + kv_size);
        old_v.insert(old_v.end(), rv.begin() + row, rv.begin() + row + kv_size);
      } else {
        in.slot_mapping.push_back(slot);
        in.positions.push_back(p);
        in.token_ids.push_back(0);
        batch.request_of_token.push_back(static_cast<int>(r));
        new_k.insert(new_k.end(), rk.begin() + row, rk.begin() + row + kv_size);
        new_v.insert(new_v.end(), rv.begin() + row, rv.begin() + row + kv_size);
        for (int i = 0; i < q_size; ++i) batch.q.push_back(q_scale * u(rng));
      }
    }
    write_kv_cache(old, batch.shape, old_k.data(), old_v.data(), batch.k_cache.data(),
                   batch.v_cache.data());
    in.query_start_loc.push_back(static_cast<int32_t>(in.token_ids.size()));
    in.seq_lens.push_back(spec.context_len);
    batch.keys.push_back(std::move(rk));
    batch.values.push_back(std::move(rv));
  }
  write_kv_cache(in, batch.shape, new_k.data(), new_v.data(), batch.k_cache.data(),
                 batch.v_cache.data());
  return batch;
}

std::vector<float> run(const Batch& batch, const AttentionOptions& options) {
  std::vector<float> out(batch.q.size(), std::numeric_limits<float>::quiet_NaN());
  ThreadPool pool(2);
  paged_attention(batch.inputs, batch.shape, options, batch.q.data(), batch.k_cache.data(),
                  batch.v_cache.data(), out.data(), pool);
  return out;
}

// out[t, h] = sum_j softmax_j(cap(scale * q . k_j)) v_j over the positions token t sees, in
// double.
std::vector<double> reference(const Batch& batch, const AttentionOptions& options) {
  const AttentionShape& s = batch.shape;
  const int kv_size = s.num_kv_heads * s.head_dim, q_size = s.num_heads * s.head_dim;
  const int group = s.num_heads / s.num_kv_heads;
  std::vector<double> out(batch.q.size());
  for (int t = 0; t < batch.inputs.num_tokens(); ++t) {
    const int r = batch.request_of_token[static_cast<size_t>(t)];
    const int pos = batch.inputs.positions[static_cast<size_t>(t)];
    const int first = first_visible(pos, options.sliding_window);
    const std::vector<float>& keys = batch.keys[static_cast<size_t>(r)];
    const std::vector<float>& values = batch.values[static_cast<size_t>(r)];
    for (int h = 0; h < s.num_heads; ++h) {
      const int g = h / group;
      std::vector<double> scores;
      double max_score = -1e300, sum = 0;
      for (int j = first; j <= pos; ++j) {
        double dot = 0;
        for (int d = 0; d < s.head_dim; ++d) {
          dot +=
              static_cast<double>(batch.q[static_cast<size_t>(t) * q_size + h * s.head_dim + d]) *
              keys[static_cast<size_t>(j) * kv_size + g * s.head_dim + d];
        }
        double score = dot * options.scale;
        if (options.logit_softcap > 0)
          score = options.logit_softcap * std::tanh(score / options.logit_softcap);
        scores.push_back(score);
        max_score = std::max(max_score, score);
      }
      for (auto& x : scores) sum += (x = std::exp(x - max_score));
      for (int d = 0; d < s.head_dim; ++d) {
        double acc = 0;
        for (int j = first; j <= pos; ++j) {
          acc += scores[static_cast<size_t>(j - first)] / sum *
                 values[static_cast<size_t>(j) * kv_size + g * s.head_dim + d];
        }
        out[static_cast<size_t>(t) * q_size + h * s.head_dim + d] = acc;
      }
    }
  }
  return out;
}

void expect_matches_reference(const Batch& batch, const AttentionOptions& options,
                              const std::string& what) {
  const std::vector<float> got = run(batch, options);
  const std::vector<double> expected = reference(batch, options);
  const int q_size = batch.shape.num_heads * batch.shape.head_dim;
  int num_bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::fabs(got[i] - expected[i]) <= 1e-5 + 1e-5 * std::fabs(expected[i])) continue;
    if (++num_bad <= 3) {
      ADD_FAILURE() << what << ": token " << i / q_size << " (position "
                    << batch.inputs.positions[i / q_size] << ") head "
                    << i % q_size / batch.shape.head_dim << " dim " << i % batch.shape.head_dim
                    << ": got " << got[i] << ", expected " << expected[i];
    }
  }
  EXPECT_EQ(num_bad, 0) << what;
}

std::string describe(const AttentionOptions& o) {
  return "scale " + std::to_string(o.scale) + ", softcap " + std::to_string(o.logit_softcap) +
         ", window " + std::to_string(o.sliding_window);
}

class PagedAttention : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(PagedAttention, MatchesFloat64Reference) {
  const AttentionCase c = GetParam();
  const Batch batch = make_batch(c, kRequests, 0, 42, 1.0f);
  expect_matches_reference(batch, causal_attention_options(c.head_dim), "causal");
}

TEST_P(PagedAttention, SlidingWindowsMatchFloat64Reference) {
  const AttentionCase c = GetParam();
  const float causal_scale = causal_attention_options(c.head_dim).scale;
  // 1: only itself; below, at, one past and well past a block; past every context.
  for (const int window : {1, 3, c.block_size - 1, c.block_size, c.block_size + 1, 40, 1000}) {
    if (window < 1) continue;
    const Batch batch = make_batch(c, kRequests, window, 100 + static_cast<uint32_t>(window), 1.0f);
    const AttentionOptions options{.scale = causal_scale, .sliding_window = window};
    expect_matches_reference(batch, options, describe(options));
  }
}

TEST_P(PagedAttention, ScaleAndSoftcapMatchFloat64Reference) {
  const AttentionCase c = GetParam();
  // Scores of a few units, so that a cap of 2 bends them well away from the identity.
  const float scale = 1.7f / std::sqrt(static_cast<float>(c.head_dim));
  for (const AttentionOptions& options :
       {AttentionOptions{.scale = scale}, AttentionOptions{.scale = scale, .logit_softcap = 2.0f},
        AttentionOptions{.scale = scale, .logit_softcap = 50.0f, .sliding_window = 16},
        AttentionOptions{.scale = scale, .logit_softcap = 2.0f, .sliding_window = 21}}) {
    const Batch batch = make_batch(c, kRequests, options.sliding_window, 7, 2.5f);
    expect_matches_reference(batch, options, describe(options));
  }
}

// Request r of batch on its own: the same cache, its tokens and its table row only.
Batch single_request(const Batch& batch, int r) {
  Batch alone = batch;
  const BatchInputs& in = batch.inputs;
  BatchInputs& out = alone.inputs;
  const auto begin = static_cast<size_t>(in.query_start_loc[static_cast<size_t>(r)]);
  const auto end = static_cast<size_t>(in.query_start_loc[static_cast<size_t>(r) + 1]);
  const auto q_size = static_cast<size_t>(batch.shape.num_heads * batch.shape.head_dim);
  out.token_ids.assign(in.token_ids.begin() + begin, in.token_ids.begin() + end);
  out.positions.assign(in.positions.begin() + begin, in.positions.begin() + end);
  out.slot_mapping.assign(in.slot_mapping.begin() + begin, in.slot_mapping.begin() + end);
  out.query_start_loc = {0, static_cast<int32_t>(end - begin)};
  out.seq_lens = {in.seq_lens[static_cast<size_t>(r)]};
  out.block_tables.assign(in.block_table(r), in.block_table(r) + in.max_blocks_per_request);
  alone.q.assign(batch.q.begin() + begin * q_size, batch.q.begin() + end * q_size);
  alone.request_of_token.assign(end - begin, 0);
  alone.keys = {batch.keys[static_cast<size_t>(r)]};
  alone.values = {batch.values[static_cast<size_t>(r)]};
  return alone;
}

// A request's output is bit for bit the same alone and in a batch, with a window too.
TEST_P(PagedAttention, RequestResultsDoNotDependOnTheBatch) {
  const AttentionCase c = GetParam();
  const AttentionOptions options{.scale = causal_attention_options(c.head_dim).scale,
                                 .logit_softcap = 3.0f,
                                 .sliding_window = c.block_size + 3};
  const Batch batch = make_batch(c, kRequests, options.sliding_window, 9, 2.0f);
  const std::vector<float> together = run(batch, options);
  const auto q_size = static_cast<size_t>(c.num_heads * c.head_dim);
  for (int r = 0; r < batch.inputs.num_requests(); ++r) {
    const std::vector<float> alone = run(single_request(batch, r), options);
    const auto begin = static_cast<size_t>(batch.inputs.query_start_loc[static_cast<size_t>(r)]);
    ASSERT_LE((begin * q_size + alone.size()), together.size());
    EXPECT_EQ(
        std::memcmp(alone.data(), together.data() + begin * q_size, alone.size() * sizeof(float)),
        0)
        << "request " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PagedAttention,
    ::testing::Values(AttentionCase{8, 4, 8, 16},    // stories260K
                      AttentionCase{4, 4, 16, 16},   // MHA, compiled size
                      AttentionCase{4, 1, 32, 16},   // gemma3 fixture: MQA
                      AttentionCase{6, 6, 48, 16},   // stories15M
                      AttentionCase{4, 2, 64, 16},   // gemma2 fixture
                      AttentionCase{14, 2, 64, 16},  // group of 7
                      AttentionCase{8, 4, 8, 8},     // compiled block size 8
                      AttentionCase{6, 2, 80, 8},    // compiled 80, block size 8
                      AttentionCase{4, 1, 128, 16},  // group of 4, large heads
                      AttentionCase{4, 2, 128, 32},  // block size 32
                      AttentionCase{2, 1, 256, 16},  // Gemma 2/3 head size
                      AttentionCase{6, 3, 112, 16},  // run-time-sized vector kernel
                      AttentionCase{3, 1, 24, 8},
                      AttentionCase{6, 3, 12, 16},  // head size without a kernel
                      AttentionCase{8, 2, 64, 5},   // odd block sizes
                      AttentionCase{3, 3, 40, 7}));

BatchInputs one_decode(int position, std::vector<int32_t> table) {
  BatchInputs in;
  in.token_ids = {0};
  in.positions = {position};
  in.slot_mapping = {0};
  in.query_start_loc = {0, 1};
  in.seq_lens = {position + 1};
  in.max_blocks_per_request = static_cast<int>(table.size());
  in.block_tables = std::move(table);
  return in;
}

TEST(PagedAttentionErrors, NoBlockInsideAWindowIsAnErrorNamingTheEntry) {
  const AttentionShape shape{2, 1, 8, 4};
  std::vector<float> cache(3 * 4 * 8, 0.5f), q(16, 0.5f), out(16);
  ThreadPool pool(1);
  // Position 9 with window 6 sees 4..9: blocks 1 and 2; block 0 may be gone, block 1 may not.
  const AttentionOptions options{.scale = 0.3f, .sliding_window = 6};
  paged_attention(one_decode(9, {-1, 1, 2}), shape, options, q.data(), cache.data(), cache.data(),
                  out.data(), pool);
  try {
    paged_attention(one_decode(9, {0, -1, 2}), shape, options, q.data(), cache.data(), cache.data(),
                    out.data(), pool);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("table entry 1 (positions 4..7)"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(paged_attention(one_decode(9, {-1, 1, 2}), shape, causal_attention_options(8),
                               q.data(), cache.data(), cache.data(), out.data(), pool),
               Error)
      << "without a window block 0 is seen";
  EXPECT_THROW(paged_attention(one_decode(9, {0, 1}), shape, options, q.data(), cache.data(),
                               cache.data(), out.data(), pool),
               Error)
      << "a table too short for the context";
}

TEST(PagedAttentionErrors, RejectsOptionsOutOfRange) {
  const AttentionShape shape{2, 1, 8, 4};
  std::vector<float> cache(4 * 8, 0.5f), q(16, 0.5f), out(16);
  ThreadPool pool(1);
  for (const AttentionOptions& options :
       {AttentionOptions{}, AttentionOptions{.scale = -1.0f},
        AttentionOptions{.scale = std::numeric_limits<float>::infinity()},
        AttentionOptions{.scale = 1.0f, .logit_softcap = -2.0f},
        AttentionOptions{.scale = 1.0f, .logit_softcap = std::numeric_limits<float>::quiet_NaN()},
        AttentionOptions{.scale = 1.0f, .sliding_window = -1}}) {
    EXPECT_THROW(paged_attention(one_decode(2, {0}), shape, options, q.data(), cache.data(),
                                 cache.data(), out.data(), pool),
                 Error)
        << describe(options);
  }
}

}  // namespace
}  // namespace sluice
