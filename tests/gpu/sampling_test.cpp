// sample_tokens against the CPU sampler (engine/runner/sampler.h): for the same logits, params,
// seed, request key, sample index and position, the GPU must pick the same token and leave the
// same penalised logits, row after row, over thousands of rows and every parameter path (greedy,
// top-k, top-p, min-p, penalties, small and large kept sets, ties, odd vocabularies, grammar
// token masks); NaN, +inf and all -inf rows give token -1.
// On the CPU kernel emulator (test::kIsEmulated) a row costs milliseconds, not microseconds: the
// tests there sample fewer rows of every vocabulary and shape (each test says what it keeps),
// never fewer paths.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/core/error.h"
#include "engine/runner/sampler.h"
#include "engine/sched/sampling_params.h"
#include "kernels/sampling.cuh"
#include "tests/gpu/gpu_test_support.h"

namespace sluice {
namespace {

using test::DeviceBuffer;

constexpr float kInf = std::numeric_limits<float>::infinity();

// One row to sample, with everything the CPU sampler's context needs.
struct SampleCase {
  std::vector<float> logits;  // [vocab_size]
  SamplingParams params;
  std::vector<int32_t> prompt;
  std::vector<int32_t> output;
  uint64_t request_key = 0;
  uint32_t sample_idx = 0;
  std::vector<uint32_t> mask;  // [mask_words(vocab_size)] a grammar's token mask; empty: none
};

bool is_allowed(const std::vector<uint32_t>& mask, int32_t id) {
  return ((mask[static_cast<size_t>(id) / 32] >> (id % 32)) & 1u) != 0;
}

struct GpuSamples {
  std::vector<int32_t> tokens;  // [num_rows]
  std::vector<float> logits;    // [num_rows, vocab_size], after penalties
  float elapsed_ms = 0.0f;
};

// The penalty entries of a case: the distinct ids of prompt and output in order of first
// appearance, with their occurrences in the output.
void append_penalty_entries(const SampleCase& sample_case, std::vector<int32_t>& token_ids,
                            std::vector<int32_t>& output_counts) {
  std::unordered_map<int32_t, size_t> entry_of_id;
  const size_t first = token_ids.size();
  for (const auto* ids : {&sample_case.prompt, &sample_case.output}) {
    for (const int32_t id : *ids) {
      if (entry_of_id.emplace(id, token_ids.size() - first).second) {
        token_ids.push_back(id);
        output_counts.push_back(0);
      }
    }
  }
  for (const int32_t id : sample_case.output) ++output_counts[first + entry_of_id.at(id)];
}

GpuSamples sample_on_gpu(const std::vector<SampleCase>& cases, int vocab_size) {
  std::vector<float> logits;
  logits.reserve(cases.size() * static_cast<size_t>(vocab_size));
  std::vector<kernels::SamplingRow> rows;
  std::vector<int32_t> penalty_token_ids, penalty_output_counts;
  std::vector<uint32_t> masks;
  for (const SampleCase& c : cases) {
    EXPECT_EQ(c.logits.size(), static_cast<size_t>(vocab_size));
    logits.insert(logits.end(), c.logits.begin(), c.logits.end());
    kernels::SamplingRow row;
    row.temperature = c.params.temperature;
    row.top_k = c.params.top_k;
    row.top_p = c.params.top_p;
    row.min_p = c.params.min_p;
    row.repetition_penalty = c.params.repetition_penalty;
    row.presence_penalty = c.params.presence_penalty;
    row.frequency_penalty = c.params.frequency_penalty;
    row.seed = c.params.seed;
    row.request_key = c.request_key;
    row.sample_idx = c.sample_idx;
    row.position = static_cast<uint32_t>(c.prompt.size() + c.output.size());
    row.penalty_begin = static_cast<int32_t>(penalty_token_ids.size());
    append_penalty_entries(c, penalty_token_ids, penalty_output_counts);
    row.penalty_end = static_cast<int32_t>(penalty_token_ids.size());
    if (!c.mask.empty()) {
      EXPECT_EQ(c.mask.size(), static_cast<size_t>(kernels::mask_words(vocab_size)));
      row.mask_row = static_cast<int32_t>(masks.size() / c.mask.size());
      masks.insert(masks.end(), c.mask.begin(), c.mask.end());
    }
    rows.push_back(row);
  }
  const int num_rows = static_cast<int>(cases.size());
  DeviceBuffer<float> d_logits(logits);
  DeviceBuffer<kernels::SamplingRow> d_rows(rows);
  DeviceBuffer<int32_t> d_penalty_ids(penalty_token_ids);
  DeviceBuffer<int32_t> d_penalty_counts(penalty_output_counts);
  DeviceBuffer<uint32_t> d_masks(masks);
  DeviceBuffer<int32_t> d_tokens(cases.size());
  const size_t workspace_bytes = kernels::sampling_workspace_bytes(num_rows, vocab_size);
  DeviceBuffer<uint8_t> d_workspace(workspace_bytes);

  cudaEvent_t start, stop;
  EXPECT_EQ(cudaEventCreate(&start), cudaSuccess);
  EXPECT_EQ(cudaEventCreate(&stop), cudaSuccess);
  EXPECT_EQ(cudaEventRecord(start, nullptr), cudaSuccess);
  const kernels::KernelStatus status = kernels::sample_tokens(
      d_logits.get(), d_rows.get(), d_penalty_ids.get(), d_penalty_counts.get(),
      masks.empty() ? nullptr : d_masks.get(), d_tokens.get(), num_rows, vocab_size,
      d_workspace.get(), workspace_bytes, nullptr);
  EXPECT_EQ(cudaEventRecord(stop, nullptr), cudaSuccess);
  EXPECT_EQ(status, kernels::kKernelOk) << cudaGetErrorString(static_cast<cudaError_t>(status));
  const cudaError_t sync = cudaDeviceSynchronize();
  EXPECT_EQ(sync, cudaSuccess) << cudaGetErrorString(sync);
  GpuSamples samples;
  EXPECT_EQ(cudaEventElapsedTime(&samples.elapsed_ms, start, stop), cudaSuccess);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  samples.tokens = d_tokens.download();
  samples.logits = d_logits.download();
  return samples;
}

// The CPU sampler's token (-1 where it throws, or where the mask allows nothing) and its
// penalised logits, after the row's mask as the engine applies it on the host
// (GrammarConstraints::mask_logits: -inf wherever the mask has no bit).
int32_t sample_on_cpu(Sampler& sampler, const SampleCase& c, std::vector<float>& logits) {
  logits = c.logits;
  if (!c.mask.empty()) {
    int num_allowed = 0;
    for (int32_t id = 0; id < static_cast<int32_t>(logits.size()); ++id) {
      if (is_allowed(c.mask, id)) {
        ++num_allowed;
      } else {
        logits[static_cast<size_t>(id)] = -kInf;
      }
    }
    if (num_allowed == 0) return -1;
  }
  const SamplingContext context{c.prompt, c.output, c.request_key, c.sample_idx};
  try {
    return sampler.sample(logits, c.params, context);
  } catch (const Error&) {
    return -1;
  }
}

// Expects every GPU token to equal the CPU sampler's, and the penalised logits to match bit for
// bit wherever the CPU sampled; reports the first few differences with the row's parameters.
void expect_matches_cpu(const std::vector<SampleCase>& cases, int vocab_size,
                        const std::string& what) {
  const GpuSamples gpu = sample_on_gpu(cases, vocab_size);
  ASSERT_EQ(gpu.tokens.size(), cases.size());
  Sampler sampler;
  std::vector<float> cpu_logits;
  int num_token_mismatches = 0;
  int num_logit_mismatches = 0;
  for (size_t r = 0; r < cases.size(); ++r) {
    const int32_t expected = sample_on_cpu(sampler, cases[r], cpu_logits);
    if (gpu.tokens[r] != expected && ++num_token_mismatches <= 5) {
      const SamplingParams& p = cases[r].params;
      ADD_FAILURE() << what << " row " << r << ": gpu token " << gpu.tokens[r] << ", cpu token "
                    << expected << " (temperature " << p.temperature << ", top_k " << p.top_k
                    << ", top_p " << p.top_p << ", min_p " << p.min_p << ", seed " << p.seed << ")";
    }
    if (expected < 0) continue;
    const float* gpu_row = gpu.logits.data() + r * static_cast<size_t>(vocab_size);
    if (std::memcmp(gpu_row, cpu_logits.data(), cpu_logits.size() * sizeof(float)) != 0 &&
        ++num_logit_mismatches <= 5) {
      ADD_FAILURE() << what << " row " << r << ": penalised logits differ from the CPU's";
    }
  }
  EXPECT_EQ(num_token_mismatches, 0)
      << what << ": tokens differ in " << num_token_mismatches << " of " << cases.size() << " rows";
  EXPECT_EQ(num_logit_mismatches, 0) << what;
  std::printf("[ sampling ] %s: %zu rows x vocab %d in %.3f ms\n", what.c_str(), cases.size(),
              vocab_size, static_cast<double>(gpu.elapsed_ms));
}

// ---- generators ---------------------------------------------------------------------------------

enum class LogitShape {
  kPeaked,     // a language model's: a few dozen plausible tokens well above a broad tail
  kFlat,       // standard normal: kept sets of thousands
  kQuantized,  // multiples of 0.5: many exact ties
};

std::vector<float> make_logits(int vocab_size, LogitShape shape, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> logits(static_cast<size_t>(vocab_size));
  for (float& logit : logits) {
    switch (shape) {
      case LogitShape::kPeaked:
        logit = 2.5f * normal(rng);
        break;
      case LogitShape::kFlat:
        logit = normal(rng);
        break;
      case LogitShape::kQuantized:
        logit = std::round(4.0f * normal(rng)) * 0.5f;
        break;
    }
  }
  if (shape == LogitShape::kPeaked) {
    std::uniform_real_distribution<float> boost(6.0f, 14.0f);
    for (int i = 0; i < 30; ++i) logits[rng() % logits.size()] += boost(rng);
    // A masked-out token or two, as constrained decoding would leave.
    for (int i = 0; i < 3; ++i) logits[rng() % logits.size()] = -kInf;
  }
  return logits;
}

// A prompt and an output drawn from a small pool of ids, so that ids repeat and several get
// output counts above one.
void make_context(int vocab_size, std::mt19937_64& rng, SampleCase& c) {
  std::vector<int32_t> pool(24);
  for (int32_t& id : pool) id = static_cast<int32_t>(rng() % static_cast<uint64_t>(vocab_size));
  c.prompt.resize(1 + rng() % 40);
  for (int32_t& id : c.prompt) id = static_cast<int32_t>(rng() % static_cast<uint64_t>(vocab_size));
  c.output.resize(rng() % 30);
  for (int32_t& id : c.output) id = pool[rng() % pool.size()];
  c.request_key = rng();
  c.sample_idx = static_cast<uint32_t>(rng() % 4);
}

// The reference settings: temperature 0.8, top-k 40, top-p 0.95, min-p 0.05, penalties.
SamplingParams reference_params(uint64_t seed) {
  SamplingParams params;
  params.temperature = 0.8f;
  params.top_k = 40;
  params.top_p = 0.95f;
  params.min_p = 0.05f;
  params.repetition_penalty = 1.1f;
  params.presence_penalty = 0.3f;
  params.frequency_penalty = 0.2f;
  params.seed = seed;
  return params;
}

template <typename T>
T pick(const std::vector<T>& choices, std::mt19937_64& rng) {
  return choices[rng() % choices.size()];
}

// Random settings covering every path of the sampler.
SamplingParams random_params(std::mt19937_64& rng) {
  SamplingParams params;
  params.temperature = pick<float>({0.0f, 0.25f, 0.8f, 1.0f, 1.7f}, rng);
  params.top_k = pick<int>({0, 0, 1, 7, 40, 1500, 5000}, rng);
  params.top_p = pick<float>({1.0f, 1.0f, 0.95f, 0.6f, 0.1f}, rng);
  params.min_p = pick<float>({0.0f, 0.0f, 0.05f, 0.3f}, rng);
  params.repetition_penalty = pick<float>({1.0f, 1.0f, 1.3f, 0.8f}, rng);
  params.presence_penalty = pick<float>({0.0f, 0.0f, 0.5f, -0.4f}, rng);
  params.frequency_penalty = pick<float>({0.0f, 0.0f, 0.25f, 1.5f}, rng);
  params.seed = rng();
  return params;
}

std::vector<SampleCase> make_cases(int vocab_size, int num_rows, uint64_t seed, bool is_reference,
                                   std::vector<LogitShape> shapes) {
  std::mt19937_64 rng(seed);
  std::vector<SampleCase> cases(static_cast<size_t>(num_rows));
  for (SampleCase& c : cases) {
    c.logits = make_logits(vocab_size, pick(shapes, rng), rng);
    c.params = is_reference ? reference_params(rng()) : random_params(rng);
    make_context(vocab_size, rng, c);
  }
  return cases;
}

// Expects the rows to take every path of the kernel's sample_row that the vocabulary allows, so
// that fewer rows (the emulated runs) still cover them all: greedy, penalties, a top-k cut, the
// shared-memory list with top-p and min-p in it, and, past the list's 1024 candidates
// (kListCapacity, kernels/sampling_select.cuh), top-p by radix selection and the radix draw with
// and without min-p.
void expect_every_path(const std::vector<SampleCase>& cases, int vocab_size) {
  constexpr int kListCapacity = 1024;
  const char* const names[] = {"greedy",      "penalties",   "top-k cut",
                               "list",        "list top-p",  "list min-p",
                               "radix top-p", "radix min-p", "radix draw"};
  int counts[std::size(names)] = {};
  for (const SampleCase& c : cases) {
    const SamplingParams& p = c.params;
    if (p.repetition_penalty != 1.0f || p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f)
      ++counts[1];
    if (!(p.temperature > 0.0f)) {
      ++counts[0];
      continue;
    }
    int num_kept = 0;
    for (const float logit : c.logits) num_kept += std::isfinite(logit) ? 1 : 0;
    if (p.top_k > 0 && p.top_k < num_kept) {
      ++counts[2];
      num_kept = p.top_k;
    }
    if (num_kept <= kListCapacity) {
      ++counts[3];
      counts[4] += p.top_p < 1.0f ? 1 : 0;
      counts[5] += p.min_p > 0.0f ? 1 : 0;
    } else if (p.top_p < 1.0f) {
      ++counts[6];
    } else {
      ++counts[p.min_p > 0.0f ? 7 : 8];
    }
  }
  const size_t num_paths = vocab_size > kListCapacity ? std::size(names) : 6;
  for (size_t i = 0; i < num_paths; ++i) {
    EXPECT_GT(counts[i], 0) << names[i] << " is never taken in " << cases.size()
                            << " rows of vocab " << vocab_size;
  }
}

// ---- tests -----------------------------------------------------------------------------------

TEST(GpuSampling, GreedyIsTheArgmaxWithTheLowestIdOnTies) {
  SLUICE_REQUIRE_CUDA();
  for (const int vocab_size : {512, 32000, 151936, 1001}) {
    SCOPED_TRACE("vocab " + std::to_string(vocab_size));
    std::mt19937_64 rng(static_cast<uint64_t>(vocab_size));
    std::vector<SampleCase> cases(64);
    std::vector<int32_t> expected;
    for (SampleCase& c : cases) {
      c.logits = make_logits(vocab_size, LogitShape::kQuantized, rng);
      // The maximum appears at several ids; the lowest must win.
      const auto top = static_cast<float>(100 + rng() % 3);
      const auto first = static_cast<int32_t>(rng() % static_cast<uint64_t>(vocab_size));
      c.logits[static_cast<size_t>(first)] = top;
      c.logits[static_cast<size_t>((first + 17) % vocab_size)] = top;
      c.logits[static_cast<size_t>((first + 1000) % vocab_size)] = top;
      int32_t best = 0;
      for (int32_t i = 1; i < vocab_size; ++i) {
        if (c.logits[static_cast<size_t>(i)] > c.logits[static_cast<size_t>(best)]) best = i;
      }
      expected.push_back(best);
      c.params.temperature = 0.0f;
    }
    const GpuSamples gpu = sample_on_gpu(cases, vocab_size);
    EXPECT_EQ(gpu.tokens, expected);
    expect_matches_cpu(cases, vocab_size, "greedy");
  }
}

TEST(GpuSampling, ReferenceSettingsMatchTheCpuSamplerOverThousandsOfRows) {
  SLUICE_REQUIRE_CUDA();
  // Emulated: every vocabulary, a sixteenth of the rows (the same settings, fewer draws).
  const int divisor = test::kIsEmulated ? 16 : 1;
  const struct {
    int vocab_size;
    int num_rows;
  } shapes[] = {{512, 4096}, {32000, 1024}, {151936, 256}};
  for (const auto& shape : shapes) {
    const auto cases =
        make_cases(shape.vocab_size, shape.num_rows / divisor, 1000 + shape.vocab_size,
                   /*is_reference=*/true, {LogitShape::kPeaked});
    expect_matches_cpu(cases, shape.vocab_size,
                       "reference settings, vocab " + std::to_string(shape.vocab_size));
  }
}

TEST(GpuSampling, RandomSettingsMatchTheCpuSampler) {
  SLUICE_REQUIRE_CUDA();
  // Emulated: every vocabulary, a quarter of the rows (still several per path; checked below).
  const int divisor = test::kIsEmulated ? 4 : 1;
  const struct {
    int vocab_size;
    int num_rows;
  } shapes[] = {{512, 2048}, {1001, 1024}, {32000, 512}, {151936, 128}};
  for (const auto& shape : shapes) {
    const auto cases = make_cases(
        shape.vocab_size, shape.num_rows / divisor, 2000 + shape.vocab_size,
        /*is_reference=*/false, {LogitShape::kPeaked, LogitShape::kFlat, LogitShape::kQuantized});
    expect_every_path(cases, shape.vocab_size);
    expect_matches_cpu(cases, shape.vocab_size,
                       "random settings, vocab " + std::to_string(shape.vocab_size));
  }
}

// Kept sets far above the 1024 candidates that fit in shared memory take the multi-pass radix
// selection for every cut.
TEST(GpuSampling, LargeKeptSetsMatchTheCpuSampler) {
  SLUICE_REQUIRE_CUDA();
  for (const int vocab_size : {32000, 151936}) {
    std::mt19937_64 rng(static_cast<uint64_t>(vocab_size) + 3);
    // Emulated: a quarter of the rows (24 and 64), every cut still past the shared-memory list.
    const size_t divisor = test::kIsEmulated ? 4 : 1;
    std::vector<SampleCase> cases((vocab_size > 100000 ? 96 : 256) / divisor);
    for (size_t r = 0; r < cases.size(); ++r) {
      SampleCase& c = cases[r];
      c.logits =
          make_logits(vocab_size, r % 3 == 2 ? LogitShape::kQuantized : LogitShape::kFlat, rng);
      c.params.temperature = pick<float>({1.0f, 2.0f}, rng);
      c.params.top_k = pick<int>({0, 3000}, rng);
      c.params.top_p = pick<float>({1.0f, 0.9f}, rng);
      c.params.min_p = pick<float>({0.0f, 0.01f}, rng);
      c.params.seed = rng();
      make_context(vocab_size, rng, c);
    }
    expect_matches_cpu(cases, vocab_size, "large kept sets, vocab " + std::to_string(vocab_size));
  }
}

// Equal logits give equal weights (exactly 1), so top-p lands exactly on a running sum and the
// CPU's inclusive comparison must be reproduced exactly, and ties break by id.
TEST(GpuSampling, ExactTiesMatchTheCpuSampler) {
  SLUICE_REQUIRE_CUDA();
  for (const int vocab_size : {512, 1001, 4096}) {
    std::mt19937_64 rng(static_cast<uint64_t>(vocab_size) + 5);
    std::vector<SampleCase> cases(test::kIsEmulated ? 128
                                                    : 512);  // emulated: every setting, fewer seeds
    for (SampleCase& c : cases) {
      c.logits.assign(static_cast<size_t>(vocab_size), 1.5f);
      if (rng() % 2 == 0) c.logits[rng() % c.logits.size()] = -kInf;
      c.params.temperature = 1.0f;
      c.params.top_k = pick<int>({0, 3, 256, 2000}, rng);
      c.params.top_p = pick<float>({1.0f, 0.5f, 0.25f}, rng);
      c.params.seed = rng();
      c.request_key = rng();
    }
    expect_matches_cpu(cases, vocab_size, "ties, vocab " + std::to_string(vocab_size));
  }
}

TEST(GpuSampling, NanInfAndAllNegativeInfinityGiveMinusOne) {
  SLUICE_REQUIRE_CUDA();
  const int vocab_size = 1000;
  std::mt19937_64 rng(17);
  std::vector<SampleCase> cases;
  for (const float temperature : {0.0f, 0.8f}) {
    SampleCase base;
    base.logits = make_logits(vocab_size, LogitShape::kPeaked, rng);
    base.params.temperature = temperature;
    base.params.top_k = 40;
    base.params.seed = 5;

    SampleCase nan_row = base;
    nan_row.logits[123] = std::numeric_limits<float>::quiet_NaN();
    cases.push_back(nan_row);
    SampleCase inf_row = base;
    inf_row.logits[999] = kInf;
    cases.push_back(inf_row);
    SampleCase all_negative_infinity = base;
    all_negative_infinity.logits.assign(static_cast<size_t>(vocab_size), -kInf);
    cases.push_back(all_negative_infinity);
    SampleCase one_finite = all_negative_infinity;
    one_finite.logits[321] = -50.0f;
    cases.push_back(one_finite);
    // A penalty can push a huge logit past the float range: it is clamped, never +inf.
    SampleCase huge = base;
    huge.logits[7] = -3.0e38f;
    huge.logits[8] = 3.0e38f;
    huge.params.repetition_penalty = 0.1f;
    huge.prompt = {7, 8};
    cases.push_back(huge);
    SampleCase bad_penalty_id = base;
    bad_penalty_id.params.repetition_penalty = 1.2f;
    bad_penalty_id.prompt = {5, vocab_size};
    cases.push_back(bad_penalty_id);
    cases.push_back(base);  // a normal row in the same batch is unaffected
  }
  const GpuSamples gpu = sample_on_gpu(cases, vocab_size);
  const std::vector<int32_t> expected_pattern = {-1, -1, -1, 321, 8, -1};
  for (size_t half = 0; half < 2; ++half) {
    for (size_t i = 0; i < expected_pattern.size(); ++i) {
      EXPECT_EQ(gpu.tokens[half * 7 + i], expected_pattern[i]) << "case " << half * 7 + i;
    }
    EXPECT_GE(gpu.tokens[half * 7 + 6], 0);
  }
  expect_matches_cpu(cases, vocab_size, "special values");
}

// Grammar masks in a batch with unmasked rows, on odd vocabularies: every masked token is one
// its mask allows, the tokens and masked-then-penalised logits equal the CPU's, a mask that
// allows nothing gives -1, and a NaN the mask leaves out is no error (masks come first).
TEST(GpuSampling, GrammarMasksMatchTheCpuSamplerOnMaskedLogits) {
  SLUICE_REQUIRE_CUDA();
  for (const int vocab_size : {1001, 32000, 151936}) {
    SCOPED_TRACE("vocab " + std::to_string(vocab_size));
    std::mt19937_64 rng(static_cast<uint64_t>(vocab_size) + 11);
    // Emulated: a quarter of the rows (96 and 24), so each of the 7 mask kinds still has 3 or more.
    const int divisor = test::kIsEmulated ? 4 : 1;
    auto cases =
        make_cases(vocab_size, (vocab_size > 100000 ? 96 : 384) / divisor, 3000 + vocab_size,
                   /*is_reference=*/false, {LogitShape::kPeaked, LogitShape::kFlat});
    const size_t words = static_cast<size_t>(kernels::mask_words(vocab_size));
    std::vector<int> kinds;
    for (size_t r = 0; r < cases.size(); ++r) {
      SampleCase& c = cases[r];
      const int kind = static_cast<int>(r % 7);  // 0: no mask
      kinds.push_back(kind);
      if (kind == 0) continue;
      c.mask.assign(words, 0u);
      const auto allow = [&](size_t id) { c.mask[id / 32] |= 1u << (id % 32); };
      // An id the row gives a finite logit (make_logits leaves a few at -inf).
      const auto finite_id = [&] {
        for (;;) {
          const size_t id = rng() % static_cast<uint64_t>(vocab_size);
          if (std::isfinite(c.logits[id])) return id;
        }
      };
      switch (kind) {
        case 1:  // half the vocabulary
          for (size_t w = 0; w < words; ++w) c.mask[w] = static_cast<uint32_t>(rng());
          break;
        case 2:  // a few tokens, as inside a JSON string's closing
          for (int i = 0; i < 20; ++i) allow(finite_id());
          break;
        case 3:  // one token
          allow(finite_id());
          break;
        case 4:  // everything
          for (size_t id = 0; id < static_cast<size_t>(vocab_size); ++id) allow(id);
          break;
        case 5:  // nothing
          break;
        case 6: {  // a NaN and +inf where the mask has no bit
          for (size_t w = 0; w < words; ++w) c.mask[w] = static_cast<uint32_t>(rng() | rng());
          const size_t nan_id = rng() % static_cast<uint64_t>(vocab_size);
          const size_t inf_id = rng() % static_cast<uint64_t>(vocab_size);
          c.mask[nan_id / 32] &= ~(1u << (nan_id % 32));
          c.mask[inf_id / 32] &= ~(1u << (inf_id % 32));
          c.logits[nan_id] = std::numeric_limits<float>::quiet_NaN();
          c.logits[inf_id] = kInf;
          break;
        }
      }
      // The last word's bits past the vocabulary stay clear, as GrammarConstraints leaves them.
      if (vocab_size % 32 != 0) c.mask[words - 1] &= (1u << (vocab_size % 32)) - 1u;
    }
    const GpuSamples gpu = sample_on_gpu(cases, vocab_size);
    for (size_t r = 0; r < cases.size(); ++r) {
      if (kinds[r] == 0) continue;
      if (kinds[r] == 5) {
        EXPECT_EQ(gpu.tokens[r], -1) << "row " << r;
      } else {
        ASSERT_GE(gpu.tokens[r], 0) << "row " << r << " kind " << kinds[r];
        EXPECT_TRUE(is_allowed(cases[r].mask, gpu.tokens[r]))
            << "row " << r << " kind " << kinds[r];
      }
    }
    expect_matches_cpu(cases, vocab_size, "grammar masks, vocab " + std::to_string(vocab_size));
  }
}

// The same row sampled under many seeds: the empirical frequencies follow the kept
// distribution (a sanity check independent of the CPU code). 8192 draws within 0.02 (3.7 standard
// deviations of the likeliest token's frequency); emulated, 2048 draws within 4 standard
// deviations of each token's own frequency (0.044 for the likeliest, 0.024 for the least likely),
// still far tighter than what a wrong temperature or a dropped token would move them.
TEST(GpuSampling, FrequenciesFollowTheSoftmax) {
  SLUICE_REQUIRE_CUDA();
  const int vocab_size = 512;
  std::vector<float> logits(vocab_size, -kInf);
  const float kept[] = {2.0f, 1.0f, 0.5f, 0.0f};
  for (int i = 0; i < 4; ++i) logits[static_cast<size_t>(100 * i + 3)] = kept[i];
  std::vector<SampleCase> cases(test::kIsEmulated ? 2048 : 8192);
  for (size_t r = 0; r < cases.size(); ++r) {
    cases[r].logits = logits;
    cases[r].params.temperature = 1.0f;
    cases[r].params.seed = r;
  }
  const GpuSamples gpu = sample_on_gpu(cases, vocab_size);
  double total = 0.0;
  for (const float k : kept) total += std::exp(k - 2.0f);
  for (int i = 0; i < 4; ++i) {
    const int32_t id = 100 * i + 3;
    const double expected = std::exp(kept[i] - 2.0f) / total;
    double observed = 0.0;
    for (const int32_t token : gpu.tokens) observed += token == id ? 1.0 : 0.0;
    observed /= static_cast<double>(cases.size());
    const double tolerance =
        test::kIsEmulated
            ? 4.0 * std::sqrt(expected * (1.0 - expected) / static_cast<double>(cases.size()))
            : 0.02;
    EXPECT_NEAR(observed, expected, tolerance) << "token " << id;
  }
}

}  // namespace
}  // namespace sluice
