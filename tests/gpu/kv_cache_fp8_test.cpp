// The FP8 E4M3 KV cache: the codec (engine/core/fp8_e4m3.h) against the format's definition on all
// 256 codes, the cache write (write_kv_cache_fp8) bit for bit against the host codec on odd head
// sizes, padding slots and fused q|k|v rows, and paged_attention_fp8 in every tuning (one pass,
// split-KV, tiled decode, prefill and mixed batches) against a float64 reference over the
// dequantized cache. Slots no query may read hold a NaN scale, so reading one poisons the
// output. Tolerances as paged_attention_test.cpp's: the reference reads the same dequantized
// values, so what is left is the output's rounding.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "engine/core/fp8_e4m3.h"
#include "kernels/kv_cache_fp8.cuh"
#include "kernels/paged_attention.cuh"
#include "kernels/paged_attention_tuning.cuh"
#include "tests/gpu/gpu_test_support.h"
#include "tests/gpu/kernel_test_support.h"

namespace sluice {
namespace {

using namespace kernel_test;  // NOLINT: the shared helpers of the kernel tests

// The format's definition: sign, 4 exponent bits (bias 7), 3 mantissa bits; exponent 0 is
// subnormal. 0x7F and 0xFF are NaN in E4M3 and never written.
double e4m3_value(int code) {
  const int exponent = (code >> 3) & 0xF;
  const int mantissa = code & 7;
  const double magnitude =
      exponent == 0 ? std::ldexp(mantissa, -9) : std::ldexp(8 + mantissa, exponent - 10);
  return (code & 0x80) != 0 ? -magnitude : magnitude;
}

bool is_nan_code(int code) {
  return (code & 0x7F) == 0x7F;
}

TEST(Fp8E4M3, EveryCodeDecodesToItsValueAndEncodesBack) {
  for (int code = 0; code < 256; ++code) {
    if (is_nan_code(code)) continue;
    const float value = fp8_e4m3_to_float(static_cast<uint8_t>(code));
    EXPECT_EQ(static_cast<double>(value), e4m3_value(code)) << "code " << code;
    EXPECT_EQ(float_to_fp8_e4m3(value), code) << "code " << code << " (" << value << ")";
  }
  EXPECT_EQ(fp8_e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(fp8_e4m3_to_float(0x01), std::ldexp(1.0f, -9));
}

TEST(Fp8E4M3, RoundsToNearestTiesToEvenAndSaturates) {
  for (int code = 0; code < 0x7E; ++code) {
    const float low = fp8_e4m3_to_float(static_cast<uint8_t>(code));
    const float high = fp8_e4m3_to_float(static_cast<uint8_t>(code + 1));
    const float middle = (low + high) / 2.0f;  // exact: both have few mantissa bits
    const int even = code % 2 == 0 ? code : code + 1;
    EXPECT_EQ(float_to_fp8_e4m3(middle), even) << "between codes " << code << " and " << code + 1;
    EXPECT_EQ(float_to_fp8_e4m3(-middle), 0x80 | even);
    EXPECT_EQ(float_to_fp8_e4m3(std::nextafter(middle, 0.0f)), code);
    EXPECT_EQ(float_to_fp8_e4m3(std::nextafter(middle, 1e9f)), code + 1);
  }
  EXPECT_EQ(float_to_fp8_e4m3(464.0f), 0x7E);  // past the last tie: still the largest finite
  EXPECT_EQ(float_to_fp8_e4m3(1e30f), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(-std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_EQ(float_to_fp8_e4m3(std::ldexp(1.0f, -11)), 0x00);  // below half the smallest step
}

TEST(Fp8E4M3, ARowsLargestValueMapsToTheLargestCode) {
  for (const float amax : {1e-6f, 0.37f, 1.0f, 3.0f, 1234.5f}) {
    const float scale = fp8_e4m3_scale(amax);
    const uint8_t code = fp8_e4m3_quantize(-amax, amax);
    EXPECT_EQ(code, 0xFE) << amax;
    EXPECT_NEAR(fp8_e4m3_to_float(code) * scale, -amax, amax * 1e-6) << amax;
  }
  EXPECT_EQ(fp8_e4m3_scale(0.0f), 0.0f);
  EXPECT_EQ(fp8_e4m3_quantize(0.0f, 0.0f), 0);
}

// What the cache holds for one row: codes and scale from the row's values as T rounds them.
struct Fp8HostRow {
  std::vector<uint8_t> codes;
  float scale = 0.0f;
};

Fp8HostRow quantize_fp8_row(const float* values, int n) {
  float amax = 0.0f;
  for (int i = 0; i < n; ++i) amax = std::max(amax, std::fabs(values[i]));
  Fp8HostRow row;
  row.scale = fp8_e4m3_scale(amax);
  for (int i = 0; i < n; ++i) row.codes.push_back(fp8_e4m3_quantize(values[i], amax));
  return row;
}

template <typename T>
class KvCacheFp8Write : public ::testing::Test {};
TYPED_TEST_SUITE(KvCacheFp8Write, ElementTypes, ElementTypeNames);

// Tokens go to shuffled slots of a larger pool; the second token is padding (slot -1). One head
// of one token is all zeros (scale 0, codes 0). fused: k and v are parts of q|k|v rows.
template <typename T>
void check_fp8_write(int head_dim, int num_tokens, bool fused) {
  SCOPED_TRACE("head_dim " + std::to_string(head_dim) + ", tokens " + std::to_string(num_tokens) +
               (fused ? ", fused rows" : ""));
  constexpr int kNumKvHeads = 3;
  constexpr int kQSize = 40;  // the q part of a fused row
  const int kv_dim = kNumKvHeads * head_dim;
  const int row = fused ? kQSize + 2 * kv_dim : kv_dim;
  const int num_slots = 2 * num_tokens + 5;
  std::vector<float> rows =
      random_values(static_cast<size_t>(num_tokens) * row,
                    static_cast<uint32_t>(head_dim + num_tokens), -3.0f, 3.0f);
  // Values of very different sizes per head, so per-head scales matter.
  for (int t = 0; t < num_tokens; ++t) {
    for (int e = 0; e < row; ++e)
      rows[static_cast<size_t>(t) * row + e] *= std::ldexp(1.0f, e % 7 - 3);
  }
  const int k_offset = fused ? kQSize : 0;
  const int v_offset = fused ? kQSize + kv_dim : 0;
  std::fill_n(rows.begin() + k_offset + head_dim, head_dim, 0.0f);  // token 0, K head 1
  std::vector<float> v_rows = rows;  // dense layout: v is its own array
  if (!fused) {
    for (float& x : v_rows) x = -x * 0.5f;
  }
  const std::vector<Storage<T>> k_host = to_storage<T>(rows);
  const std::vector<Storage<T>> v_host = to_storage<T>(v_rows);
  std::vector<int64_t> slots(static_cast<size_t>(num_slots));
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), std::mt19937(7));
  slots.resize(static_cast<size_t>(num_tokens));
  if (num_tokens > 1) slots[1] = -1;

  const size_t num_codes = static_cast<size_t>(num_slots) * kv_dim;
  const size_t num_scales = static_cast<size_t>(num_slots) * kNumKvHeads;
  DeviceBuffer<Storage<T>> k_dev(k_host), v_dev(v_host);
  DeviceBuffer<int64_t> slot_dev(slots);
  DeviceBuffer<uint8_t> k_codes(std::vector<uint8_t>(num_codes, 0xAB));
  DeviceBuffer<uint8_t> v_codes(std::vector<uint8_t>(num_codes, 0xAB));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  DeviceBuffer<float> k_scales(std::vector<float>(num_scales, nan));
  DeviceBuffer<float> v_scales(std::vector<float>(num_scales, nan));
  const T* k = device_ptr<T>(k_dev) + k_offset;
  const T* v = fused ? device_ptr<T>(k_dev) + v_offset : device_ptr<T>(v_dev);
  expect_ok(kernels::write_kv_cache_fp8<T>(
      k, v, fused ? row : 0, slot_dev.get(),
      kernels::Fp8KvLayer{k_codes.get(), v_codes.get(), k_scales.get(), v_scales.get()}, num_tokens,
      kNumKvHeads, head_dim, nullptr));

  std::vector<uint8_t> want_k(num_codes, 0xAB), want_v(num_codes, 0xAB);
  std::vector<float> want_k_scales(num_scales, nan), want_v_scales(num_scales, nan);
  const std::vector<float> k_rounded = to_floats<T>(k_host);
  const std::vector<float> v_rounded = to_floats<T>(v_host);
  for (int t = 0; t < num_tokens; ++t) {
    const int64_t slot = slots[static_cast<size_t>(t)];
    if (slot < 0) continue;
    for (int h = 0; h < kNumKvHeads; ++h) {
      const size_t src = static_cast<size_t>(t) * row + static_cast<size_t>(h) * head_dim;
      const size_t dst = static_cast<size_t>(slot) * kNumKvHeads + h;
      const Fp8HostRow kr = quantize_fp8_row(k_rounded.data() + k_offset + src, head_dim);
      const Fp8HostRow vr =
          quantize_fp8_row((fused ? k_rounded : v_rounded).data() + v_offset + src, head_dim);
      std::copy(kr.codes.begin(), kr.codes.end(), want_k.begin() + dst * head_dim);
      std::copy(vr.codes.begin(), vr.codes.end(), want_v.begin() + dst * head_dim);
      want_k_scales[dst] = kr.scale;
      want_v_scales[dst] = vr.scale;
    }
  }
  EXPECT_EQ(want_k_scales[static_cast<size_t>(slots[0]) * kNumKvHeads + 1], 0.0f);
  expect_same_bits(k_codes.download(), want_k, "K codes");
  expect_same_bits(v_codes.download(), want_v, "V codes");
  expect_same_bits(k_scales.download(), want_k_scales, "K scales");
  expect_same_bits(v_scales.download(), want_v_scales, "V scales");
}

TYPED_TEST(KvCacheFp8Write, MatchesTheHostCodecBitForBit) {
  SLUICE_REQUIRE_CUDA();
  for (const int head_dim : {8, 36, 72, 128, 200}) {
    for (const int num_tokens : {1, 7, 33}) check_fp8_write<TypeParam>(head_dim, num_tokens, false);
  }
  check_fp8_write<TypeParam>(64, 5, true);
  check_fp8_write<TypeParam>(40, 17, true);
}

TEST(KvCacheFp8Write, RefusesBadArguments) {
  SLUICE_REQUIRE_CUDA();
  DeviceBuffer<float> kv(64);
  DeviceBuffer<int64_t> slots(std::vector<int64_t>{0});
  DeviceBuffer<uint8_t> codes(64);
  DeviceBuffer<float> scales(8);
  const kernels::Fp8KvLayer cache{codes.get(), codes.get(), scales.get(), scales.get()};
  const auto bad = static_cast<kernels::KernelStatus>(cudaErrorInvalidValue);
  EXPECT_EQ(kernels::write_kv_cache_fp8<float>(kv.get(), kv.get(), 0, slots.get(), cache, 1, 1,
                                               2048, nullptr),
            bad);  // head_dim past 1024
  EXPECT_EQ(kernels::write_kv_cache_fp8<float>(kv.get(), kv.get(), 4, slots.get(), cache, 1, 2, 8,
                                               nullptr),
            bad);  // rows narrower than the heads
  EXPECT_EQ(kernels::write_kv_cache_fp8<float>(kv.get(), kv.get(), 0, slots.get(),
                                               kernels::Fp8KvLayer{}, 1, 1, 8, nullptr),
            bad);  // no cache
  EXPECT_EQ(kernels::write_kv_cache_fp8<float>(kv.get(), kv.get(), 0, slots.get(), cache, 0, 1, 8,
                                               nullptr),
            kernels::kKernelOk);  // nothing to write
}

// ---- attention over an FP8 cache -------------------------------------------------------

struct Fp8Shape {
  int num_heads;
  int num_kv_heads;
  int head_dim;
};

struct Fp8Request {
  int context_len;
  int query_len;
};

template <typename T>
struct Fp8AttentionCase {
  kernels::PagedAttentionParams params;
  std::vector<Storage<T>> q;
  std::vector<uint8_t> k_codes, v_codes;  // [num_slots, num_kv_heads, head_dim]
  std::vector<float> k_scales, v_scales;  // [num_slots, num_kv_heads]
  std::vector<int32_t> block_tables, query_start_loc, seq_lens, positions;
  std::vector<double> reference;  // [num_tokens, num_heads * head_dim]
  std::vector<float> sinks;       // [num_heads] attention sinks, or empty
};

// Random q, K and V in [-1, 1] times a per-(position, head) magnitude between 2^-4 and 2^3,
// quantized into shuffled blocks; slots outside every context hold a NaN scale. The reference
// attends over the dequantized rows in float64, with each head's sink (when `sinks` has one per
// head) in the max and the denominator.
template <typename T>
Fp8AttentionCase<T> make_fp8_case(const Fp8Shape& shape, int block_size,
                                  const std::vector<Fp8Request>& requests, uint32_t seed,
                                  const std::vector<float>& sinks = {}) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::uniform_int_distribution<int> magnitude(-4, 3);
  const int hd = shape.head_dim;
  const int q_size = shape.num_heads * hd;
  const size_t slot_size = static_cast<size_t>(shape.num_kv_heads) * hd;
  const int group = shape.num_heads / shape.num_kv_heads;

  Fp8AttentionCase<T> c;
  c.sinks = sinks;
  kernels::PagedAttentionParams& p = c.params;
  p.num_requests = static_cast<int>(requests.size());
  p.num_heads = shape.num_heads;
  p.num_kv_heads = shape.num_kv_heads;
  p.head_dim = hd;
  p.block_size = block_size;
  p.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  int total_blocks = 2;  // spares nobody owns
  for (const Fp8Request& r : requests) {
    const int blocks = (r.context_len + block_size - 1) / block_size;
    total_blocks += blocks;
    p.max_blocks_per_request = std::max(p.max_blocks_per_request, blocks + 1);
    p.max_query_len = std::max(p.max_query_len, r.query_len);
    p.min_query_len = p.min_query_len == 0 ? r.query_len : std::min(p.min_query_len, r.query_len);
    p.max_seq_len = std::max(p.max_seq_len, r.context_len);
    p.num_tokens += r.query_len;
  }
  std::vector<int32_t> physical(static_cast<size_t>(total_blocks));
  std::iota(physical.begin(), physical.end(), 0);
  std::shuffle(physical.begin(), physical.end(), rng);
  const size_t num_slots = static_cast<size_t>(total_blocks) * block_size;
  c.k_codes.assign(num_slots * slot_size, 0);
  c.v_codes.assign(num_slots * slot_size, 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  c.k_scales.assign(num_slots * shape.num_kv_heads, nan);
  c.v_scales.assign(c.k_scales.size(), nan);
  c.block_tables.assign(static_cast<size_t>(p.num_requests) * p.max_blocks_per_request, -1);
  c.query_start_loc.push_back(0);
  size_t next_block = 0;
  for (int r = 0; r < p.num_requests; ++r) {
    const Fp8Request& spec = requests[static_cast<size_t>(r)];
    int32_t* table = c.block_tables.data() + static_cast<size_t>(r) * p.max_blocks_per_request;
    for (int b = 0; b * block_size < spec.context_len; ++b) table[b] = physical[next_block++];
    // The request's dequantized K and V: [context_len, num_kv_heads, head_dim].
    std::vector<float> k(static_cast<size_t>(spec.context_len) * slot_size), v(k.size());
    for (int j = 0; j < spec.context_len; ++j) {
      const size_t slot = static_cast<size_t>(table[j / block_size]) * block_size + j % block_size;
      for (int h = 0; h < shape.num_kv_heads; ++h) {
        for (auto [values, codes, scales] :
             {std::tuple{&k, &c.k_codes, &c.k_scales}, std::tuple{&v, &c.v_codes, &c.v_scales}}) {
          std::vector<float> row(static_cast<size_t>(hd));
          const float size = std::ldexp(1.0f, magnitude(rng));
          for (float& x : row) x = size * uniform(rng);
          const Fp8HostRow quantized = quantize_fp8_row(row.data(), hd);
          const size_t dst = slot * shape.num_kv_heads + h;
          std::copy(quantized.codes.begin(), quantized.codes.end(),
                    codes->begin() + static_cast<std::ptrdiff_t>(dst * hd));
          (*scales)[dst] = quantized.scale;
          for (int d = 0; d < hd; ++d) {
            (*values)[(static_cast<size_t>(j) * shape.num_kv_heads + h) * hd + d] =
                fp8_e4m3_to_float(quantized.codes[static_cast<size_t>(d)]) * quantized.scale;
          }
        }
      }
    }
    c.seq_lens.push_back(spec.context_len);
    for (int i = 0; i < spec.query_len; ++i) {
      const int position = spec.context_len - spec.query_len + i;
      c.positions.push_back(position);
      std::vector<float> q_token(static_cast<size_t>(q_size));
      for (float& x : q_token) {
        c.q.push_back(ElementTraits<T>::from_float(uniform(rng)));
        x = ElementTraits<T>::to_float(c.q.back());
      }
      for (int h = 0; h < shape.num_heads; ++h) {
        const int kv_head = h / group;
        std::vector<double> weight(static_cast<size_t>(position) + 1);
        double max_score = -std::numeric_limits<double>::infinity();
        for (int j = 0; j <= position; ++j) {
          double dot = 0.0;
          for (int d = 0; d < hd; ++d) {
            dot += static_cast<double>(q_token[static_cast<size_t>(h * hd + d)]) *
                   k[(static_cast<size_t>(j) * shape.num_kv_heads + kv_head) * hd + d];
          }
          weight[static_cast<size_t>(j)] = dot * p.scale;
          max_score = std::max(max_score, weight[static_cast<size_t>(j)]);
        }
        if (!sinks.empty()) max_score = std::max<double>(max_score, sinks[static_cast<size_t>(h)]);
        double total = sinks.empty() ? 0.0 : std::exp(sinks[static_cast<size_t>(h)] - max_score);
        for (double& w : weight) total += (w = std::exp(w - max_score));
        for (int d = 0; d < hd; ++d) {
          double out = 0.0;
          for (int j = 0; j <= position; ++j) {
            out += weight[static_cast<size_t>(j)] / total *
                   v[(static_cast<size_t>(j) * shape.num_kv_heads + kv_head) * hd + d];
          }
          c.reference.push_back(out);
        }
      }
    }
    c.query_start_loc.push_back(static_cast<int32_t>(c.positions.size()));
  }
  return c;
}

template <typename T>
void check_fp8_attention(const Fp8Shape& shape, int block_size,
                         const std::vector<Fp8Request>& requests, uint32_t seed,
                         const std::vector<float>& sinks = {}) {
  const Fp8AttentionCase<T> c = make_fp8_case<T>(shape, block_size, requests, seed, sinks);
  kernels::PagedAttentionTuning single_pass, small_split, tiled;
  single_pass.decode_partition_size = -1;
  small_split.decode_partition_size = 48;
  tiled.is_decode_tiled = true;
  for (const kernels::PagedAttentionTuning& tuning :
       {kernels::PagedAttentionTuning{}, single_pass, small_split, tiled}) {
    const std::string what =
        "heads " + std::to_string(shape.num_heads) + "/" + std::to_string(shape.num_kv_heads) +
        "x" + std::to_string(shape.head_dim) + ", block size " + std::to_string(block_size) +
        ", partitions " + std::to_string(tuning.decode_partition_size) +
        (tuning.is_decode_tiled ? ", tiled" : "");
    SCOPED_TRACE(what);
    DeviceBuffer<Storage<T>> q(c.q);
    DeviceBuffer<uint8_t> k_codes(c.k_codes), v_codes(c.v_codes);
    DeviceBuffer<float> k_scales(c.k_scales), v_scales(c.v_scales);
    DeviceBuffer<int32_t> tables(c.block_tables), starts(c.query_start_loc);
    DeviceBuffer<int32_t> seq_lens(c.seq_lens), positions(c.positions);
    DeviceBuffer<Storage<T>> out(c.reference.size());
    const size_t workspace_bytes = kernels::paged_attention_workspace_bytes(c.params, tuning);
    DeviceBuffer<unsigned char> workspace(std::max<size_t>(workspace_bytes, 1));
    DeviceBuffer<float> d_sinks(c.sinks.empty() ? std::vector<float>(1) : c.sinks);
    kernels::PagedAttentionParams params = c.params;
    params.sinks = c.sinks.empty() ? nullptr : d_sinks.get();
    expect_ok(kernels::paged_attention_fp8_tuned<T>(
        params, tuning, device_ptr<T>(q),
        kernels::Fp8KvLayer{k_codes.get(), v_codes.get(), k_scales.get(), v_scales.get()},
        tables.get(), starts.get(), seq_lens.get(), positions.get(), device_ptr<T>(out),
        workspace.get(), workspace_bytes, nullptr));
    const std::vector<float> got = to_floats<T>(out.download());
    std::vector<float> expected(c.reference.begin(), c.reference.end());
    expect_close(got, expected, ElementTraits<T>::kTolerance, what);
  }
}

template <typename T>
class PagedAttentionFp8 : public ::testing::Test {};
TYPED_TEST_SUITE(PagedAttentionFp8, ElementTypes, ElementTypeNames);

constexpr int kFp8LongContext = test::kIsEmulated ? 700 : 2049;

TYPED_TEST(PagedAttentionFp8, DecodeBatchAtBlockAndPartitionEdges) {
  SLUICE_REQUIRE_CUDA();
  const std::vector<Fp8Request> decode = {{1, 1}, {15, 1}, {16, 1}, {17, 1}, {kFp8LongContext, 1}};
  check_fp8_attention<TypeParam>({8, 2, 128}, 16, decode, 1);
  check_fp8_attention<TypeParam>({6, 3, 72}, 32, decode, 2);  // a head size without a tuned path
}

TYPED_TEST(PagedAttentionFp8, PrefillChunksAndMixedBatches) {
  SLUICE_REQUIRE_CUDA();
  // A whole prompt, a chunk starting mid-context, and decodes beside them.
  const std::vector<Fp8Request> mixed = {{37, 37}, {50, 13}, {33, 1}, {1, 1}};
  check_fp8_attention<TypeParam>({8, 2, 128}, 16, mixed, 3);
  check_fp8_attention<TypeParam>({4, 4, 64}, 16, mixed, 4);
  check_fp8_attention<TypeParam>({4, 1, 256}, 32, {{40, 40}, {19, 1}}, 5);
}

// gpt-oss's attention sinks over an FP8 cache: decodes (split and not) and prompts.
TYPED_TEST(PagedAttentionFp8, AttentionSinks) {
  SLUICE_REQUIRE_CUDA();
  const std::vector<Fp8Request> mixed = {{37, 37}, {50, 13}, {kFp8LongContext, 1}, {1, 1}};
  check_fp8_attention<TypeParam>({8, 2, 64}, 16, mixed, 6,
                                 {-2.0f, 0.0f, 1.0f, 3.0f, -1.0f, 9.0f, 0.5f, 2.5f});
}

TEST(PagedAttentionFp8, RefusesACacheWithoutScales) {
  SLUICE_REQUIRE_CUDA();
  const Fp8AttentionCase<float> c = make_fp8_case<float>({2, 1, 8}, 16, {{3, 1}}, 6);
  DeviceBuffer<float> q(c.q), out(c.reference.size());
  DeviceBuffer<uint8_t> codes(c.k_codes);
  DeviceBuffer<int32_t> tables(c.block_tables), starts(c.query_start_loc);
  DeviceBuffer<int32_t> seq_lens(c.seq_lens), positions(c.positions);
  EXPECT_EQ(kernels::paged_attention_fp8<float>(
                c.params, q.get(), kernels::Fp8KvLayer{codes.get(), codes.get(), nullptr, nullptr},
                tables.get(), starts.get(), seq_lens.get(), positions.get(), out.get(), nullptr, 0,
                nullptr),
            static_cast<kernels::KernelStatus>(cudaErrorInvalidValue));
}

}  // namespace
}  // namespace sluice
