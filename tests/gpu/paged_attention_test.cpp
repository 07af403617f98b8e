// paged_attention against a float64 host reference: random q and per-request K/V written into
// a device cache ([num_blocks, block_size, num_kv_heads, head_dim]) through shuffled block
// tables, on the head layouts of real models, block sizes 16 and 32, contexts around block and
// partition edges, decode-only, prefill-only, mixed and chunked-prefill batches; and the
// per-layer options (scale, logit soft-cap, sliding window) against both the reference and the
// CPU attention (engine/backend/cpu/cpu_attention), with the blocks outside every window of a
// request dropped from its table (-1) or pointing at a block of NaN.
// Tolerance: |got - ref| <= abs + rel * |ref| with FP32 (1e-4, 1e-4) and BF16/FP16 (1e-5, 2e-2).
// The reference reads the same rounded q/K/V, so the 16-bit error is the output's rounding.
// On the CPU kernel emulator (test::kIsEmulated), where a block of 128 threads costs about a
// millisecond, the long contexts and prompts shrink to what still crosses the same edges (see
// kLongContext; each test says what else it keeps); the head layouts, block sizes, dtypes,
// tunings and options stay.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend/cpu/cpu_attention.h"
#include "kernels/paged_attention.cuh"
#include "kernels/paged_attention_tuning.cuh"
#include "tests/gpu/gpu_test_support.h"

namespace sluice::kernels {
namespace {

using test::DeviceBuffer;

struct HeadShape {
  int num_heads;
  int num_kv_heads;
  int head_dim;
};

constexpr HeadShape kLlama3_8B{32, 8, 128};
constexpr HeadShape kQwen25_7B{28, 4, 128};
constexpr HeadShape kMistral7B{32, 8, 128};
constexpr HeadShape kStories260K{8, 4, 8};
constexpr HeadShape kMha64{16, 16, 64};

// One request of a batch: its context after this step and how many of its last positions are
// queried now (1: decode; context_len: a whole prompt; otherwise a chunk starting mid-context).
struct RequestSpec {
  int context_len;
  int query_len;
};

template <typename T>
float to_float(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return x;
  } else if constexpr (std::is_same_v<T, __half>) {
    return __half2float(x);
  } else {
    return __bfloat162float(x);
  }
}

template <typename T>
T from_float(float x) {
  if constexpr (std::is_same_v<T, float>) {
    return x;
  } else if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(x);
  } else {
    return __float2bfloat16_rn(x);
  }
}

template <typename T>
struct Tolerance {
  static constexpr double kAbs = 1e-5;
  static constexpr double kRel = 2e-2;
};
template <>
struct Tolerance<float> {
  static constexpr double kAbs = 1e-4;
  static constexpr double kRel = 1e-4;
};

// A layer's attention options as a test case gives them, and what happens to the blocks that
// lie wholly outside every window of a request.
struct CaseOptions {
  float scale = 0.0f;  // 0: 1 / sqrt(head_dim)
  float logit_softcap = 0.0f;
  int sliding_window = 0;
  bool is_outside_block_poisoned = false;  // true: a block of NaN; false: no block (-1)
  std::vector<float> sinks;                // [num_heads] attention sinks (gpt-oss), or none
};

// A batch on the host: inputs laid out as the kernel reads them, and the float64 reference.
template <typename T>
struct AttentionCase {
  PagedAttentionParams params;
  std::vector<T> q;                      // [num_tokens, num_heads * head_dim]
  std::vector<T> k_cache;                // [num_blocks, block_size, num_kv_heads, head_dim]
  std::vector<T> v_cache;                // same
  std::vector<int32_t> block_tables;     // [num_requests, max_blocks_per_request], -1 padded
  std::vector<int32_t> query_start_loc;  // [num_requests + 1]
  std::vector<int32_t> seq_lens;         // [num_requests]
  std::vector<int32_t> positions;        // [num_tokens]
  std::vector<double> reference;         // [num_tokens, num_heads * head_dim]
  std::vector<float> sinks;              // [num_heads], or empty
};

// The first position a query at `position` sees.
int first_visible(int position, int sliding_window) {
  return sliding_window > 0 ? std::max(0, position - sliding_window + 1) : 0;
}

// out[t, h] = softmax_j(cap(q[t, h] . k[j] * scale)) . v[j] over the positions j that t sees
// (j <= positions[t], and inside its window) of t's request, KV head h / (num_heads /
// num_kv_heads); k, v: the request's logical rows. A head's sink (when `sinks` has one per head)
// joins the max and the denominator without a value.
void reference_attention(const HeadShape& shape, const PagedAttentionParams& p,
                         const std::vector<float>& q_token, int position,
                         const std::vector<float>& k, const std::vector<float>& v,
                         const std::vector<float>& sinks, double* out) {
  const int group = shape.num_heads / shape.num_kv_heads;
  const int hd = shape.head_dim;
  const int first = first_visible(position, p.sliding_window);
  std::vector<double> weight(static_cast<size_t>(position) + 1);
  for (int h = 0; h < shape.num_heads; ++h) {
    const int kv_head = h / group;
    const float* qh = q_token.data() + static_cast<size_t>(h) * hd;
    double max_score = -std::numeric_limits<double>::infinity();
    for (int j = first; j <= position; ++j) {
      const float* kj = k.data() + (static_cast<size_t>(j) * shape.num_kv_heads + kv_head) * hd;
      double dot = 0.0;
      for (int d = 0; d < hd; ++d) dot += static_cast<double>(qh[d]) * kj[d];
      weight[j] = dot * p.scale;
      if (p.logit_softcap > 0.0f)
        weight[j] = p.logit_softcap * std::tanh(weight[j] / p.logit_softcap);
      max_score = std::max(max_score, weight[j]);
    }
    const double sink = sinks.empty() ? -std::numeric_limits<double>::infinity()
                                      : static_cast<double>(sinks[static_cast<size_t>(h)]);
    max_score = std::max(max_score, sink);
    double total = sinks.empty() ? 0.0 : std::exp(sink - max_score);
    for (int j = first; j <= position; ++j) total += (weight[j] = std::exp(weight[j] - max_score));
    double* oh = out + static_cast<size_t>(h) * hd;
    for (int d = 0; d < hd; ++d) oh[d] = 0.0;
    for (int j = first; j <= position; ++j) {
      const float* vj = v.data() + (static_cast<size_t>(j) * shape.num_kv_heads + kv_head) * hd;
      const double prob = weight[j] / total;
      for (int d = 0; d < hd; ++d) oh[d] += prob * vj[d];
    }
  }
}

// Builds a batch with random q (scaled by q_scale) and K/V in [-1, 1], physical blocks assigned
// in shuffled order; every cache slot outside the requests' contexts, or that no query of its
// request sees, holds NaN, so reading one poisons the output. Blocks wholly outside every
// window of a request are -1 in its table, or a block of NaN (options).
template <typename T>
AttentionCase<T> make_case(const HeadShape& shape, int block_size,
                           const std::vector<RequestSpec>& requests, uint32_t seed,
                           float q_scale = 1.0f, const CaseOptions& options = {}) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const int hd = shape.head_dim;
  const int q_size = shape.num_heads * hd;
  const size_t slot_size = static_cast<size_t>(shape.num_kv_heads) * hd;

  AttentionCase<T> c;
  PagedAttentionParams& p = c.params;
  p.num_requests = static_cast<int>(requests.size());
  p.num_heads = shape.num_heads;
  p.num_kv_heads = shape.num_kv_heads;
  p.head_dim = hd;
  p.block_size = block_size;
  p.scale = options.scale > 0.0f ? options.scale : 1.0f / std::sqrt(static_cast<float>(hd));
  p.logit_softcap = options.logit_softcap;
  p.sliding_window = options.sliding_window;
  int total_blocks = 0;
  for (const RequestSpec& r : requests) {
    const int num_blocks = (r.context_len + block_size - 1) / block_size;
    total_blocks += num_blocks;
    p.max_blocks_per_request =
        std::max(p.max_blocks_per_request, num_blocks + 1);  // keeps a -1 pad
    p.max_query_len = std::max(p.max_query_len, r.query_len);
    p.min_query_len = p.min_query_len == 0 ? r.query_len : std::min(p.min_query_len, r.query_len);
    p.max_seq_len = std::max(p.max_seq_len, r.context_len);
    p.num_tokens += r.query_len;
  }
  total_blocks += 3;  // spare blocks nobody owns
  std::vector<int32_t> physical(static_cast<size_t>(total_blocks));
  std::iota(physical.begin(), physical.end(), 0);
  std::shuffle(physical.begin(), physical.end(), rng);
  const int32_t poisoned_block = physical.back();  // a spare: NaN throughout

  const T nan = from_float<T>(std::numeric_limits<float>::quiet_NaN());
  c.k_cache.assign(static_cast<size_t>(total_blocks) * block_size * slot_size, nan);
  c.v_cache.assign(c.k_cache.size(), nan);
  c.block_tables.assign(static_cast<size_t>(p.num_requests) * p.max_blocks_per_request, -1);
  c.q.resize(static_cast<size_t>(p.num_tokens) * q_size);
  c.reference.resize(c.q.size());
  c.query_start_loc.push_back(0);
  c.sinks = options.sinks;

  size_t next_block = 0;
  for (int r = 0; r < p.num_requests; ++r) {
    const RequestSpec& spec = requests[static_cast<size_t>(r)];
    // The request's logical K and V, rounded to T: [context_len, num_kv_heads, head_dim].
    std::vector<float> k(static_cast<size_t>(spec.context_len) * slot_size);
    std::vector<float> v(k.size());
    for (float& x : k) x = to_float(from_float<T>(uniform(rng)));
    for (float& x : v) x = to_float(from_float<T>(uniform(rng)));
    int32_t* table = c.block_tables.data() + static_cast<size_t>(r) * p.max_blocks_per_request;
    for (int b = 0; b * block_size < spec.context_len; ++b) table[b] = physical[next_block++];
    // What no query of the request sees: its blocks leave the table, its slots stay NaN.
    const int first_seen = first_visible(spec.context_len - spec.query_len, options.sliding_window);
    for (int b = 0; (b + 1) * block_size <= first_seen; ++b)
      table[b] = options.is_outside_block_poisoned ? poisoned_block : -1;
    for (int j = first_seen; j < spec.context_len; ++j) {
      const size_t slot = static_cast<size_t>(table[j / block_size]) * block_size + j % block_size;
      for (size_t e = 0; e < slot_size; ++e) {
        c.k_cache[slot * slot_size + e] = from_float<T>(k[j * slot_size + e]);
        c.v_cache[slot * slot_size + e] = from_float<T>(v[j * slot_size + e]);
      }
    }
    c.seq_lens.push_back(spec.context_len);
    for (int i = 0; i < spec.query_len; ++i) {
      const int token = static_cast<int>(c.positions.size());
      const int position = spec.context_len - spec.query_len + i;
      c.positions.push_back(position);
      std::vector<float> q_token(static_cast<size_t>(q_size));
      for (int e = 0; e < q_size; ++e) {
        const T value = from_float<T>(q_scale * uniform(rng));
        c.q[static_cast<size_t>(token) * q_size + e] = value;
        q_token[static_cast<size_t>(e)] = to_float(value);
      }
      reference_attention(shape, p, q_token, position, k, v, options.sinks,
                          c.reference.data() + static_cast<size_t>(token) * q_size);
    }
    c.query_start_loc.push_back(static_cast<int32_t>(c.positions.size()));
  }
  return c;
}

struct RunResult {
  KernelStatus status = kKernelOk;
  cudaError_t sync_status = cudaSuccess;
  std::vector<float> out;  // [num_tokens, num_heads * head_dim]; NaN where nothing was written
};

template <typename T>
RunResult run_attention(const AttentionCase<T>& c, const PagedAttentionTuning& tuning = {}) {
  const PagedAttentionParams& p = c.params;
  DeviceBuffer<T> q(c.q), k_cache(c.k_cache), v_cache(c.v_cache);
  DeviceBuffer<int32_t> block_tables(c.block_tables), query_start_loc(c.query_start_loc);
  DeviceBuffer<int32_t> seq_lens(c.seq_lens), positions(c.positions);
  DeviceBuffer<T> out(
      std::vector<T>(c.reference.size(), from_float<T>(std::numeric_limits<float>::quiet_NaN())));
  const size_t workspace_bytes = paged_attention_workspace_bytes(p, tuning);
  DeviceBuffer<unsigned char> workspace(std::max<size_t>(workspace_bytes, 1));
  DeviceBuffer<float> sinks(c.sinks.empty() ? std::vector<float>(1) : c.sinks);
  PagedAttentionParams params = p;
  params.sinks = c.sinks.empty() ? nullptr : sinks.get();
  RunResult result;
  result.status = paged_attention_tuned<T>(params, tuning, q.get(), k_cache.get(), v_cache.get(),
                                           block_tables.get(), query_start_loc.get(),
                                           seq_lens.get(), positions.get(), out.get(),
                                           workspace.get(), workspace_bytes, nullptr);
  result.sync_status = cudaDeviceSynchronize();
  for (const T& x : out.download()) result.out.push_back(to_float(x));
  return result;
}

// Counts elements outside abs + rel * |expected| (NaN counts) and reports the first few with
// their token, head and dimension.
template <typename Expected>
void expect_close(const std::vector<float>& got, const std::vector<Expected>& expected,
                  const HeadShape& shape, double abs_tol, double rel_tol, const std::string& what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  const size_t q_size = static_cast<size_t>(shape.num_heads) * shape.head_dim;
  size_t num_bad = 0;
  double max_err = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double ref = static_cast<double>(expected[i]);
    const double err = std::abs(static_cast<double>(got[i]) - ref);
    max_err = std::max(max_err, std::isnan(err) ? std::numeric_limits<double>::infinity() : err);
    if (!(err <= abs_tol + rel_tol * std::abs(ref))) {
      if (++num_bad <= 5) {
        ADD_FAILURE() << what << ": token " << i / q_size << " head " << i % q_size / shape.head_dim
                      << " dim " << i % shape.head_dim << ": got " << got[i] << ", expected "
                      << ref;
      }
    }
  }
  EXPECT_EQ(num_bad, 0u) << what << ": " << num_bad << " of " << got.size()
                         << " elements off, max error " << max_err;
}

template <typename T>
void check_against_reference(const HeadShape& shape, int block_size,
                             const std::vector<RequestSpec>& requests, uint32_t seed,
                             const PagedAttentionTuning& tuning = {}, float q_scale = 1.0f) {
  const AttentionCase<T> c = make_case<T>(shape, block_size, requests, seed, q_scale);
  const RunResult result = run_attention(c, tuning);
  ASSERT_EQ(result.status, kKernelOk)
      << cudaGetErrorString(static_cast<cudaError_t>(result.status));
  ASSERT_EQ(result.sync_status, cudaSuccess) << cudaGetErrorString(result.sync_status);
  expect_close(result.out, c.reference, shape, Tolerance<T>::kAbs, Tolerance<T>::kRel,
               "heads " + std::to_string(shape.num_heads) + "/" +
                   std::to_string(shape.num_kv_heads) + "x" + std::to_string(shape.head_dim) +
                   ", block size " + std::to_string(block_size));
}

// The CPU attention (engine/backend/cpu/cpu_attention) over the same batch: the cache converted to
// its layout (K transposed within a block), the same block tables, q rounded as the kernel reads
// it. [num_tokens, num_heads * head_dim]
template <typename T>
std::vector<float> run_cpu_attention(const AttentionCase<T>& c) {
  const PagedAttentionParams& p = c.params;
  const size_t hd = static_cast<size_t>(p.head_dim), bs = static_cast<size_t>(p.block_size);
  const size_t num_kv_heads = static_cast<size_t>(p.num_kv_heads);
  const size_t num_blocks = c.k_cache.size() / (bs * num_kv_heads * hd);
  std::vector<float> k(c.k_cache.size()), v(c.v_cache.size());
  for (size_t b = 0; b < num_blocks; ++b) {
    for (size_t o = 0; o < bs; ++o) {
      for (size_t g = 0; g < num_kv_heads; ++g) {
        for (size_t d = 0; d < hd; ++d) {
          const size_t src = ((b * bs + o) * num_kv_heads + g) * hd + d;
          k[((b * num_kv_heads + g) * hd + d) * bs + o] = to_float(c.k_cache[src]);
          v[((b * num_kv_heads + g) * bs + o) * hd + d] = to_float(c.v_cache[src]);
        }
      }
    }
  }
  BatchInputs in;
  in.positions = c.positions;
  in.token_ids.assign(c.positions.size(), 0);
  in.slot_mapping.assign(c.positions.size(), 0);
  in.query_start_loc = c.query_start_loc;
  in.seq_lens = c.seq_lens;
  in.block_tables = c.block_tables;
  in.max_blocks_per_request = p.max_blocks_per_request;
  std::vector<float> q;
  for (const T& x : c.q) q.push_back(to_float(x));
  std::vector<float> out(q.size());
  ThreadPool pool(2);
  const AttentionShape shape{p.num_heads, p.num_kv_heads, p.head_dim, p.block_size};
  const AttentionOptions options{p.scale, p.logit_softcap, p.sliding_window, !c.sinks.empty()};
  sluice::paged_attention(in, shape, options, q.data(), k.data(), v.data(), out.data(), pool,
                          c.sinks.empty() ? nullptr : c.sinks.data());
  return out;
}

std::string describe(const HeadShape& shape, int block_size, const CaseOptions& options,
                     const PagedAttentionTuning& tuning) {
  return "heads " + std::to_string(shape.num_heads) + "/" + std::to_string(shape.num_kv_heads) +
         "x" + std::to_string(shape.head_dim) + ", block size " + std::to_string(block_size) +
         ", scale " + std::to_string(options.scale) + ", softcap " +
         std::to_string(options.logit_softcap) + ", window " +
         std::to_string(options.sliding_window) +
         (options.is_outside_block_poisoned ? " (NaN blocks)" : " (no blocks)") +
         (options.sinks.empty() ? "" : ", sinks") +
         (tuning.is_decode_tiled ? ", tiled"
                                 : ", partitions " + std::to_string(tuning.decode_partition_size));
}

// The kernels with a layer's options against the float64 reference and the CPU attention.
template <typename T>
void check_options(const HeadShape& shape, int block_size, const std::vector<RequestSpec>& requests,
                   uint32_t seed, const CaseOptions& options, float q_scale = 1.0f,
                   const PagedAttentionTuning& tuning = {}) {
  const std::string what = describe(shape, block_size, options, tuning);
  const AttentionCase<T> c = make_case<T>(shape, block_size, requests, seed, q_scale, options);
  const RunResult result = run_attention(c, tuning);
  ASSERT_EQ(result.status, kKernelOk) << what;
  ASSERT_EQ(result.sync_status, cudaSuccess)
      << what << ": " << cudaGetErrorString(result.sync_status);
  expect_close(result.out, c.reference, shape, Tolerance<T>::kAbs, Tolerance<T>::kRel,
               what + " vs reference");
  expect_close(result.out, run_cpu_attention(c), shape, Tolerance<T>::kAbs, Tolerance<T>::kRel,
               what + " vs CPU attention");
}

// The decode pass in one piece, split in the default partitions and in partitions of 48 (not a
// multiple of the block size), and the tiled pass running decodes too.
std::vector<PagedAttentionTuning> all_tunings() {
  PagedAttentionTuning single_pass, small_split, tiled;
  single_pass.decode_partition_size = -1;
  small_split.decode_partition_size = 48;
  tiled.is_decode_tiled = true;
  return {PagedAttentionTuning{}, single_pass, small_split, tiled};
}

template <typename T>
class PagedAttentionTest : public ::testing::Test {};

struct DtypeNames {
  template <typename T>
  static std::string GetName(int) {
    if constexpr (std::is_same_v<T, float>) return "F32";
    if constexpr (std::is_same_v<T, __nv_bfloat16>) return "BF16";
    return "F16";
  }
};
using AttentionDtypes = ::testing::Types<float, __nv_bfloat16, __half>;
TYPED_TEST_SUITE(PagedAttentionTest, AttentionDtypes, DtypeNames);

// A long context: one position past a multiple of the default 512-position decode partition,
// so split-KV runs several full partitions and a last one of a single key (9 partitions of 512,
// 86 of 48 on a GPU; 4 and 33 on the emulator). Contexts past 16384, where the partitions grow,
// are in OddBlockSizesAndVeryLongContext.
constexpr int kLongContext = test::kIsEmulated ? 1537 : 4097;

// Contexts at block edges (15, 16, 17), just under a decode partition (511) and a long one.
const std::vector<RequestSpec> kDecodeBatch = {{1, 1},  {15, 1},  {16, 1},
                                               {17, 1}, {511, 1}, {kLongContext, 1}};

TYPED_TEST(PagedAttentionTest, DecodeBatchLlama3BlockSize16) {
  SLUICE_REQUIRE_CUDA();
  check_against_reference<TypeParam>(kLlama3_8B, 16, kDecodeBatch, 1);
}

TYPED_TEST(PagedAttentionTest, DecodeBatchQwen25BlockSize32) {
  SLUICE_REQUIRE_CUDA();
  check_against_reference<TypeParam>(kQwen25_7B, 32, kDecodeBatch, 2);
}

TYPED_TEST(PagedAttentionTest, PrefillBatchQwen25) {
  SLUICE_REQUIRE_CUDA();
  // Whole prompts: seven query heads per KV head, so query tiles split tokens' head groups. The
  // long prompt is 511 tokens on a GPU, 200 on the emulator (still many query and key tiles,
  // ending mid-block).
  const int long_prompt = test::kIsEmulated ? 200 : 511;
  check_against_reference<TypeParam>(
      kQwen25_7B, 32, {{15, 15}, {16, 16}, {17, 17}, {1, 1}, {long_prompt, long_prompt}}, 3);
  check_against_reference<TypeParam>(kLlama3_8B, 16, {{17, 17}, {130, 130}}, 4);
}

TYPED_TEST(PagedAttentionTest, MixedBatchMistral) {
  SLUICE_REQUIRE_CUDA();
  // Decode requests, a fresh prompt, and chunked prefill resuming mid-block (500 = 31 * 16 + 4),
  // at a block edge (32) and deep in a long context. The emulator's chunks are shorter: 40 and
  // 16 queries instead of 100 and 40 (the same resume point 500, still many key tiles deep).
  const int chunk = test::kIsEmulated ? 40 : 100, deep_chunk = test::kIsEmulated ? 16 : 40;
  check_against_reference<TypeParam>(kMistral7B, 16,
                                     {{kLongContext, 1},
                                      {17, 17},
                                      {500 + chunk, chunk},
                                      {1, 1},
                                      {16, 1},
                                      {64, 32},
                                      {kLongContext, deep_chunk}},
                                     5);
}

TYPED_TEST(PagedAttentionTest, Stories260K) {
  SLUICE_REQUIRE_CUDA();
  check_against_reference<TypeParam>(kStories260K, 16, kDecodeBatch, 6);
  check_against_reference<TypeParam>(
      kStories260K, 32, {{15, 15}, {511, 64}, {1, 1}, {17, 1}, {kLongContext, 1}, {200, 200}}, 7);
}

// Block sizes that are not powers of two (a block boundary falls anywhere in a tile or split
// piece) and a context past 16384, where split pieces grow beyond 512 positions. The emulator
// keeps the contexts (16384 is the edge) and Llama 3's head size and group of 4 query heads per
// KV head, on 4 query heads instead of 32.
TYPED_TEST(PagedAttentionTest, OddBlockSizesAndVeryLongContext) {
  SLUICE_REQUIRE_CUDA();
  check_against_reference<TypeParam>(kLlama3_8B, 5,
                                     {{1, 1}, {4, 1}, {5, 1}, {6, 1}, {97, 1}, {300, 41}}, 37);
  check_against_reference<TypeParam>(kMistral7B, 7, {{13, 13}, {700, 1}, {64, 9}}, 38);
  constexpr HeadShape kVeryLongShape = test::kIsEmulated ? HeadShape{4, 1, 128} : kLlama3_8B;
  check_against_reference<TypeParam>(kVeryLongShape, 16, {{16385, 1}, {20000, 3}}, 39);
}

TYPED_TEST(PagedAttentionTest, MultiHeadAttention64) {
  SLUICE_REQUIRE_CUDA();
  check_against_reference<TypeParam>(
      kMha64, 16, {{kLongContext, 1}, {33, 33}, {511, 1}, {300, 77}, {16, 16}}, 8);
}

TYPED_TEST(PagedAttentionTest, HeadDims80And96) {
  SLUICE_REQUIRE_CUDA();
  check_against_reference<TypeParam>({32, 32, 80}, 16, {{600, 1}, {17, 17}, {100, 37}, {1, 1}}, 9);
  check_against_reference<TypeParam>({8, 2, 80}, 32, {{1030, 1}, {70, 70}}, 10);
  check_against_reference<TypeParam>({32, 32, 96}, 32, {{600, 1}, {17, 17}, {100, 37}}, 11);
  check_against_reference<TypeParam>({16, 4, 96}, 16, {{1030, 1}, {70, 70}, {15, 1}}, 12);
}

TYPED_TEST(PagedAttentionTest, HeadDim256AndGenericHeadDims) {
  SLUICE_REQUIRE_CUDA();
  const std::vector<RequestSpec> batch = {{700, 1}, {40, 40}, {90, 21}, {1, 1}};
  check_against_reference<TypeParam>({8, 1, 256}, 16, batch, 13);  // tuned 256, one KV head for 8
  for (const int head_dim : {16, 24, 40, 120, 136, 192, 248}) {  // generic bodies (<= 128, <= 256)
    SCOPED_TRACE("head_dim " + std::to_string(head_dim));
    check_against_reference<TypeParam>({4, 2, head_dim}, 16, batch,
                                       14 + static_cast<uint32_t>(head_dim));
  }
}

TYPED_TEST(PagedAttentionTest, QueryHeadGroupSizes) {
  SLUICE_REQUIRE_CUDA();
  // Groups of 3 (SmolLM), 6 and 16 (two decode blocks per KV head), and multi-query.
  const std::vector<RequestSpec> batch = {{1100, 1}, {50, 50}, {77, 13}, {2, 1}};
  check_against_reference<TypeParam>({9, 3, 64}, 16, batch, 30);
  check_against_reference<TypeParam>({12, 2, 64}, 32, batch, 31);
  check_against_reference<TypeParam>({16, 1, 64}, 16, batch, 32);
  check_against_reference<TypeParam>({32, 1, 128}, 16, batch, 33);
}

TYPED_TEST(PagedAttentionTest, PeakedScores) {
  SLUICE_REQUIRE_CUDA();
  // Large scores, so a late key can take over the running max of the online softmax. The
  // emulator keeps a decode over 3 partitions and prompts over 5 and 22 key tiles.
  const std::vector<RequestSpec> batch =
      test::kIsEmulated ? std::vector<RequestSpec>{{1100, 1}, {160, 160}, {700, 64}}
                        : std::vector<RequestSpec>{{2000, 1}, {300, 300}, {1500, 64}};
  check_against_reference<TypeParam>(kLlama3_8B, 16, batch, 34, {}, 8.0f);
}

TYPED_TEST(PagedAttentionTest, SplitKvAgreesWithSinglePass) {
  SLUICE_REQUIRE_CUDA();
  const std::vector<RequestSpec> batch = {
      {kLongContext, 1}, {1000, 1}, {513, 1}, {512, 1}, {100, 1}};
  const AttentionCase<TypeParam> c = make_case<TypeParam>(kLlama3_8B, 16, batch, 35);
  PagedAttentionTuning single_pass, split_default, split_small;
  single_pass.decode_partition_size = -1;
  split_small.decode_partition_size =
      48;  // not a multiple of the block size: partitions split blocks
  ASSERT_EQ(paged_attention_workspace_bytes(c.params, single_pass), 0u);
  ASSERT_GT(paged_attention_workspace_bytes(c.params, split_default), 0u);
  const RunResult one = run_attention(c, single_pass);
  const RunResult split = run_attention(c, split_default);
  const RunResult many = run_attention(c, split_small);
  for (const RunResult* r : {&one, &split, &many}) {
    ASSERT_EQ(r->status, kKernelOk);
    ASSERT_EQ(r->sync_status, cudaSuccess);
  }
  const double abs_tol = Tolerance<TypeParam>::kAbs, rel_tol = Tolerance<TypeParam>::kRel;
  expect_close(one.out, c.reference, kLlama3_8B, abs_tol, rel_tol, "single pass vs reference");
  expect_close(split.out, c.reference, kLlama3_8B, abs_tol, rel_tol, "split (512) vs reference");
  expect_close(many.out, c.reference, kLlama3_8B, abs_tol, rel_tol, "split (48) vs reference");
  // The two paths differ only in float summation order (and the final rounding to T).
  const double agree_rel = std::is_same_v<TypeParam, float> ? 1e-5 : 1e-2;
  expect_close(split.out, one.out, kLlama3_8B, 1e-6, agree_rel, "split (512) vs single pass");
  expect_close(many.out, one.out, kLlama3_8B, 1e-6, agree_rel, "split (48) vs single pass");
}

TYPED_TEST(PagedAttentionTest, DecodeKernelAgreesWithTiledKernel) {
  SLUICE_REQUIRE_CUDA();
  const AttentionCase<TypeParam> c =
      make_case<TypeParam>(kQwen25_7B, 16, {{700, 1}, {1, 1}, {33, 1}, {64, 1}}, 36);
  PagedAttentionTuning tiled;
  tiled.is_decode_tiled = true;
  const RunResult decode = run_attention(c);
  const RunResult tiled_result = run_attention(c, tiled);
  ASSERT_EQ(decode.status, kKernelOk);
  ASSERT_EQ(tiled_result.status, kKernelOk);
  ASSERT_EQ(decode.sync_status, cudaSuccess) << cudaGetErrorString(decode.sync_status);
  ASSERT_EQ(tiled_result.sync_status, cudaSuccess) << cudaGetErrorString(tiled_result.sync_status);
  const double abs_tol = Tolerance<TypeParam>::kAbs, rel_tol = Tolerance<TypeParam>::kRel;
  expect_close(decode.out, c.reference, kQwen25_7B, abs_tol, rel_tol, "decode kernel vs reference");
  expect_close(tiled_result.out, c.reference, kQwen25_7B, abs_tol, rel_tol,
               "tiled kernel vs reference");
}

// q as the CUDA backend leaves it: the first part of each token's q | k | v row. The k and v
// parts hold NaN, so a kernel reading dense q rows (another token's k and v) gives NaN.
TYPED_TEST(PagedAttentionTest, QueryRowsInsideFusedQkvRows) {
  SLUICE_REQUIRE_CUDA();
  using T = TypeParam;
  for (const HeadShape& shape : {kLlama3_8B, kStories260K}) {
    for (const bool is_tiled : {false, true}) {
      SCOPED_TRACE(std::string(is_tiled ? "tiled" : "decode") + " pass, head_dim " +
                   std::to_string(shape.head_dim));
      // Decode with split-KV partitions, a whole prompt, chunked prefill (100 queries from
      // position 500; 40 on the emulator), a one-token context.
      const int chunk = test::kIsEmulated ? 40 : 100;
      AttentionCase<T> c = make_case<T>(
          shape, 16, {{kLongContext, 1}, {17, 17}, {500 + chunk, chunk}, {1, 1}, {64, 1}}, 12);
      const size_t q_size = static_cast<size_t>(shape.num_heads) * shape.head_dim;
      const size_t stride = q_size + 2 * static_cast<size_t>(shape.num_kv_heads) * shape.head_dim;
      const size_t num_tokens = c.q.size() / q_size;
      std::vector<T> fused(num_tokens * stride,
                           from_float<T>(std::numeric_limits<float>::quiet_NaN()));
      for (size_t t = 0; t < num_tokens; ++t) {
        std::copy_n(c.q.begin() + static_cast<ptrdiff_t>(t * q_size), q_size,
                    fused.begin() + static_cast<ptrdiff_t>(t * stride));
      }
      c.q = std::move(fused);
      c.params.q_row_stride = static_cast<int64_t>(stride);
      PagedAttentionTuning tuning;
      tuning.is_decode_tiled = is_tiled;
      const RunResult result = run_attention(c, tuning);
      ASSERT_EQ(result.status, kKernelOk);
      ASSERT_EQ(result.sync_status, cudaSuccess) << cudaGetErrorString(result.sync_status);
      expect_close(result.out, c.reference, shape, Tolerance<T>::kAbs, Tolerance<T>::kRel,
                   "strided q");
    }
  }
}

// Windows of 1, below, at and one past a block, past a 48-position partition, past the default
// 512-position partition and past every context; decodes deep in long contexts and chunked
// prefill whose first query is far from position 0, so most blocks lie outside the windows.
TYPED_TEST(PagedAttentionTest, SlidingWindow) {
  SLUICE_REQUIRE_CUDA();
  const std::vector<RequestSpec> batch = {{1100, 1}, {40, 40}, {700, 37}, {1, 1},
                                          {17, 1},   {530, 1}, {64, 9}};
  uint32_t seed = 40;
  for (const int window : {1, 15, 16, 17, 100, 600, 5000}) {
    for (const PagedAttentionTuning& tuning : all_tunings()) {
      CaseOptions options;
      options.sliding_window = window;
      options.is_outside_block_poisoned = seed % 2 == 1;
      check_options<TypeParam>({8, 2, 64}, 16, batch, ++seed, options, 1.0f, tuning);
    }
  }
}

// Windows on odd block sizes (a window edge anywhere in a block, tile or partition), the
// run-time head-size bodies (48 up to 128, 136 up to 256) and the tuned 128 and 256.
TYPED_TEST(PagedAttentionTest, SlidingWindowOddShapes) {
  SLUICE_REQUIRE_CUDA();
  const std::vector<RequestSpec> batch = {{600, 1}, {77, 13}, {90, 90}, {2, 1}};
  CaseOptions options;
  options.sliding_window = 23;
  check_options<TypeParam>({9, 3, 64}, 5, batch, 60, options);
  options.is_outside_block_poisoned = true;
  check_options<TypeParam>({6, 6, 48}, 7, batch, 61, options);
  options.sliding_window = 70;
  check_options<TypeParam>({4, 2, 136}, 16, batch, 62, options);
  check_options<TypeParam>(kLlama3_8B, 32, {{1100, 1}, {300, 41}}, 63, options);
  options.is_outside_block_poisoned = false;
  check_options<TypeParam>({8, 4, 256}, 16, {{700, 1}, {60, 33}}, 64, options);
}

// A scale other than 1 / sqrt(head_dim), and soft-caps that bend the scores a lot (2) and a
// little (Gemma 2's 50, on scores of about 8), alone and with a window, in every pass.
TYPED_TEST(PagedAttentionTest, ScaleAndSoftcap) {
  SLUICE_REQUIRE_CUDA();
  const std::vector<RequestSpec> batch = {{700, 1}, {50, 50}, {300, 21}, {1, 1}, {40, 1}};
  uint32_t seed = 70;
  for (const PagedAttentionTuning& tuning : all_tunings()) {
    for (const CaseOptions& options :
         {CaseOptions{.scale = 0.3f}, CaseOptions{.scale = 0.3f, .logit_softcap = 2.0f},
          CaseOptions{.scale = 1.0f, .logit_softcap = 50.0f},
          CaseOptions{.scale = 0.3f, .logit_softcap = 2.0f, .sliding_window = 16}})
      check_options<TypeParam>({4, 2, 64}, 16, batch, ++seed, options, 3.0f, tuning);
  }
}

// Attention sinks (gpt-oss): one logit per query head in each softmax's max and denominator, no
// value. Sinks below, near and far above the scores (the last takes nearly all the probability,
// so the output shrinks towards 0), with a window and a soft-cap, in every pass.
TYPED_TEST(PagedAttentionTest, AttentionSinks) {
  SLUICE_REQUIRE_CUDA();
  const std::vector<RequestSpec> batch = {{700, 1}, {50, 50}, {300, 21}, {1, 1}, {40, 1}};
  const std::vector<float> sinks = {-3.0f, 0.5f, 2.0f, 12.0f};
  uint32_t seed = 90;
  for (const PagedAttentionTuning& tuning : all_tunings()) {
    for (const CaseOptions& options :
         {CaseOptions{.sinks = sinks}, CaseOptions{.sliding_window = 16, .sinks = sinks},
          CaseOptions{.scale = 0.3f, .logit_softcap = 2.0f, .sinks = sinks}})
      check_options<TypeParam>({4, 2, 64}, 16, batch, ++seed, options, 3.0f, tuning);
  }
}

// The layers of the tiny-arch fixtures: gemma2 (4/2 x 64, scale 1/8, soft-cap 50, window 16)
// and gemma3 (4/1 x 32, window 16), on their 64-token sequences as one prompt and as decodes.
TYPED_TEST(PagedAttentionTest, GemmaFixtureLayers) {
  SLUICE_REQUIRE_CUDA();
  const std::vector<RequestSpec> batch = {{64, 64}, {62, 1}, {33, 1}, {16, 1}, {17, 17}};
  check_options<TypeParam>(
      {4, 2, 64}, 16, batch, 80,
      CaseOptions{.scale = 0.125f, .logit_softcap = 50.0f, .sliding_window = 16}, 6.0f);
  check_options<TypeParam>({4, 1, 32}, 16, batch, 81,
                           CaseOptions{.sliding_window = 16, .is_outside_block_poisoned = true},
                           2.0f);
}

}  // namespace
}  // namespace sluice::kernels
