// The CUDA backend end to end against the references and the CPU backend: stories260K greedy
// ids with fp32 activations, a Q8_0 GGUF from its blocks (every type: cuda_quantized_test.cpp), a
// batch of 256 with preemption against each request alone, graphs on vs off, device sampling
// against the host sampler, and the GPU memory plan (the models of published shapes against the CPU
// backend: cuda_shapes_vs_cpu_test.cpp). Every test skips (never passes) without a CUDA device. On
// the CPU kernel emulator (test::kIsEmulated), where a decode step of stories260K takes tens of
// milliseconds, the engine runs use fewer prompts and output tokens; each test says what its
// emulated run keeps (preemption, graph replays, forks, grammar masks: the same paths).
#include "engine/backend/cuda/cuda_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/backend/borrowed_backend.h"
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/json_schema_grammar.h"
#include "engine/grammar/regex_grammar.h"
#include "engine/memory_plan.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/support/float_compare.h"
#include "tests/support/reference_data.h"
#include "tests/support/single_request_batch.h"
#include "tests/support/test_paths.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice {
namespace {

using test::argmax;
using test::single_request_batch;

constexpr int kBlockSize = 16;

CudaBackendOptions fp32(bool graphs = true) {
  return CudaBackendOptions{.activation_dtype = ActivationDType::F32, .enable_cuda_graphs = graphs};
}

std::vector<int32_t> greedy_ids(Backend& backend, int vocab, size_t count) {
  backend.allocate_kv_cache(32, kBlockSize);
  const auto prompt = test::reference_prompt_ids();
  std::vector<float> logits;
  backend.forward(single_request_batch(prompt, 0, 32, false), logits);
  std::vector<int32_t> out = {argmax(logits.data(), vocab)};
  while (out.size() < count) {
    const int pos = static_cast<int>(prompt.size() + out.size()) - 1;
    backend.forward(single_request_batch({out.back()}, pos, 32, false), logits);
    out.push_back(argmax(logits.data(), vocab));
  }
  return out;
}

class CudaStories260K : public ::testing::TestWithParam<bool> {};  // param: CUDA graphs on

// All 256 reference ids; the emulator checks the first 128 (the same single decode bucket).
TEST_P(CudaStories260K, Fp32GreedyReproducesReferenceIds) {
  SLUICE_REQUIRE_CUDA();
  const auto model = load_model(test::shared_path("models/stories260K/llama2c/stories260K.bin"));
  CudaBackend backend(*model, fp32(GetParam()));
  auto expected = test::reference_generated_ids();
  if (test::kIsEmulated) expected.resize(128);
  EXPECT_EQ(greedy_ids(backend, model->config.vocab_size, expected.size()), expected);
  if (GetParam()) {
    // Every decode step but the first.
    EXPECT_GT(backend.step_counters().num_graph_replays, test::kIsEmulated ? 100 : 200);
    EXPECT_EQ(backend.step_counters().num_graph_captures, 1);  // one bucket: 1 request, <= 256
  } else {
    EXPECT_EQ(backend.step_counters().num_graph_replays, 0);
  }
}

TEST_P(CudaStories260K, Fp32PrefillLogitsMatchReference) {
  SLUICE_REQUIRE_CUDA();
  const auto model = load_model(test::shared_path("models/stories260K/hf"));
  const int vocab = model->config.vocab_size;
  CudaBackend backend(*model, fp32(GetParam()));
  backend.allocate_kv_cache(32, kBlockSize);
  std::vector<float> logits;
  backend.forward(single_request_batch(test::reference_prompt_ids(), 0, 32, true), logits);
  for (const auto& ref : test::reference_logits("logits_prefill.json")) {
    float worst = 0.0f;
    for (int i = 0; i < vocab; ++i) {
      worst = test::nan_max(worst, std::fabs(logits[static_cast<size_t>(ref.position * vocab + i)] -
                                             ref.logits[static_cast<size_t>(i)]));
    }
    EXPECT_LT(worst, 1e-3f) << "prefill position " << ref.position;
  }
}

// Q8_0 multiplied from its blocks (the prompt through the tile kernel, each decode step, graphs
// on and off, through the GEMV): the first 60 ids of the reference.
TEST_P(CudaStories260K, Q8_0FromItsBlocksFollowsReference) {
  SLUICE_REQUIRE_CUDA();
  const auto model = load_model(test::shared_path("models/stories260K/gguf/stories260K-q8_0.gguf"));
  CudaBackend backend(*model, fp32(GetParam()));
  EXPECT_NE(backend.describe().find("Q8_0 weights kept in their blocks"), std::string::npos)
      << backend.describe();
  const auto expected = test::reference_generated_ids();
  EXPECT_EQ(greedy_ids(backend, model->config.vocab_size, 60),
            std::vector<int32_t>(expected.begin(), expected.begin() + 60));
}

INSTANTIATE_TEST_SUITE_P(Graphs, CudaStories260K, ::testing::Bool(),
                         [](const auto& param_info) { return param_info.param ? "on" : "off"; });

// ---- engine runs ---------------------------------------------------------------------------

using Outputs = std::map<std::pair<size_t, uint32_t>, FinishedRequest>;

std::unique_ptr<Engine> make_engine(const test::StoriesModel& model, Backend& backend,
                                    const EngineConfig& config) {
  return std::make_unique<Engine>(model.session.model->config, *model.session.tokenizer,
                                  std::make_unique<BorrowedBackend>(backend), config);
}

// Counts the prompts whose outputs differ and the earliest position where one does.
struct Difference {
  int num_rows = 0;
  int first_position = -1;
};
Difference compare(const Outputs& batch, const Outputs& alone) {
  Difference d;
  for (const auto& [key, a] : alone) {
    const auto& b = batch.at(key).output_token_ids;
    if (b == a.output_token_ids) continue;
    ++d.num_rows;
    size_t i = 0;
    while (i < b.size() && i < a.output_token_ids.size() && b[i] == a.output_token_ids[i]) ++i;
    if (d.first_position < 0 || static_cast<int>(i) < d.first_position)
      d.first_position = static_cast<int>(i);
  }
  return d;
}

// 256 prompts of 20-90 tokens in a pool of 160 blocks (about a tenth of what they need): heavy
// preemption. Each request is then run alone. With fp32 activations the two are expected to
// agree; the differing rows (products of other shapes round differently) are reported. The batch
// of 256 is what this test is about on a GPU; the emulator keeps repeated preemption (more than
// 5) and more than 8 requests in a step with 24 prompts of 32 output tokens in 32 blocks (about a
// fifth of what they need), each then run alone.
TEST(CudaBackendEngine, Batch256WithPreemptionAgainstAlone) {
  SLUICE_REQUIRE_CUDA();
  const test::StoriesModel model;
  const size_t num_prompts = test::kIsEmulated ? 24 : 256;
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& text : test::alpaca_prompts(num_prompts)) prompts.push_back(model.encode(text));
  CudaBackend backend(*model.session.model, fp32());
  const SamplingParams greedy{.max_tokens = test::kIsEmulated ? 32 : 48};
  test::RunStats stats;
  auto engine =
      make_engine(model, backend, EngineConfig{.num_kv_blocks = test::kIsEmulated ? 32 : 160});
  const Outputs batch = test::run_all(*engine, prompts, greedy, &stats);
  EXPECT_GT(stats.num_preemptions, test::kIsEmulated ? 5 : 20);
  EXPECT_GT(stats.max_scheduled_requests, 8);
  Outputs alone;
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto single = make_engine(model, backend, EngineConfig{.num_kv_blocks = 32});
    single->add_request(prompts[i], greedy, i);
    while (single->has_unfinished()) {
      for (auto& f : single->step().finished) alone[{i, f.sample_idx}] = std::move(f);
    }
  }
  ASSERT_EQ(batch.size(), alone.size());
  const Difference d = compare(batch, alone);
  std::printf(
      "batch of %zu (%lld preemptions, up to %d requests a step) vs alone, fp32: %d rows differ, "
      "first at output position %d\n",
      num_prompts, static_cast<long long>(stats.num_preemptions), stats.max_scheduled_requests,
      d.num_rows, d.first_position);
  ::testing::Test::RecordProperty("differing_rows", d.num_rows);
  ::testing::Test::RecordProperty("first_differing_position", d.first_position);
  EXPECT_LE(d.num_rows, 5) << "first difference at output position " << d.first_position;
}

// The schedules of the CPU backend's DeterminismAtScale test (one at a time, seven at once, all
// at once, a pool that preempts, prefill chunked at 13 tokens a step), greedy, fp32 activations.
// On the emulator, whose cuBLAS sums every element in a fixed order, the token ids must be equal
// to the one-at-a-time run; on a GPU the differing rows are printed (cuBLAS picks its kernels by
// batch size, and the decode and tiled attention kernels round differently) and kept few.
// The emulator runs every schedule on 12 prompts of 20 output tokens (the small pool of 20
// blocks still preempts, chunks of 13 tokens still split prompts).
TEST(CudaBackendEngine, SchedulesAgreeWithOneAtATime) {
  SLUICE_REQUIRE_CUDA();
  const test::StoriesModel model;
  const size_t num_prompts = test::kIsEmulated ? 12 : 300;
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& text : test::alpaca_prompts(num_prompts)) prompts.push_back(model.encode(text));
  CudaBackend backend(*model.session.model, fp32());
  const SamplingParams greedy{.max_tokens = test::kIsEmulated ? 20 : 32};
  const auto run = [&](const EngineConfig& config, test::RunStats* stats) {
    auto engine = make_engine(model, backend, config);
    return test::run_all(*engine, prompts, greedy, stats);
  };
  const Outputs alone = run(EngineConfig{.max_num_seqs = 1}, nullptr);
  ASSERT_EQ(alone.size(), num_prompts);
  struct Schedule {
    const char* name;
    EngineConfig config;
  };
  const Schedule schedules[] = {
      {"max_num_seqs 7", EngineConfig{.max_num_seqs = 7}},
      {"max_num_seqs 256", EngineConfig{.max_num_seqs = 256}},
      {"a small pool (preemption)", EngineConfig{.num_kv_blocks = test::kIsEmulated ? 20 : 96}},
      {"chunked prefill, 13 tokens a step",
       EngineConfig{.max_num_seqs = 32, .max_num_batched_tokens = 13}},
  };
  for (const Schedule& schedule : schedules) {
    test::RunStats stats;
    const Outputs batch = run(schedule.config, &stats);
    ASSERT_EQ(batch.size(), alone.size()) << schedule.name;
    const Difference d = compare(batch, alone);
    std::printf("%s (%lld preemptions) vs one at a time, fp32: %d of %zu rows differ\n",
                schedule.name, static_cast<long long>(stats.num_preemptions), d.num_rows,
                num_prompts);
    if (schedule.config.num_kv_blocks > 0) {
      EXPECT_GT(stats.num_preemptions, 0) << schedule.name;
    }
    if (test::kIsEmulated) {
      EXPECT_EQ(d.num_rows, 0) << schedule.name << ": first difference at output position "
                               << d.first_position;
    } else {
      EXPECT_LE(d.num_rows, 5) << schedule.name;
    }
  }
}

// Graphs change how decode steps are launched, never what they compute: padded decode batches
// run the same launches either way, so the tokens are identical (bf16, seeded sampling, a pool
// small enough to preempt; 8 prompts of 32 output tokens in 16 blocks on the emulator).
TEST(CudaBackendEngine, GraphsOnAndOffGiveIdenticalTokens) {
  SLUICE_REQUIRE_CUDA();
  const test::StoriesModel model;
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& text : test::alpaca_prompts(test::kIsEmulated ? 8 : 64))
    prompts.push_back(model.encode(text));
  const SamplingParams seeded{.temperature = 0.9f,
                              .top_k = 40,
                              .top_p = 0.95f,
                              .seed = 1234,
                              .max_tokens = test::kIsEmulated ? 32 : 40};
  Outputs runs[2];
  for (const bool graphs : {false, true}) {
    CudaBackend backend(*model.session.model, CudaBackendOptions{.enable_cuda_graphs = graphs});
    auto engine =
        make_engine(model, backend, EngineConfig{.num_kv_blocks = test::kIsEmulated ? 16 : 96});
    runs[graphs ? 1 : 0] = test::run_all(*engine, prompts, seeded);
    if (graphs) {
      EXPECT_GT(backend.step_counters().num_graph_replays, 30);
    } else {
      EXPECT_EQ(backend.step_counters().num_graph_replays, 0);
    }
  }
  ASSERT_EQ(runs[0].size(), runs[1].size());
  for (const auto& [key, off] : runs[0]) {
    EXPECT_EQ(runs[1].at(key).output_token_ids, off.output_token_ids) << "prompt " << key.first;
  }
}

// The engine samples on the device by default; with the same logits (fp32, one backend) that
// draws the same tokens as sampling on the host, for mixed settings and n > 1 forks (both samples
// drawn on the device from the prompt's one logits row), with the host's log-probabilities (6
// prompts of 24 output tokens on the emulator, 48 of 48 on a GPU).
TEST(CudaBackendEngine, DeviceSamplingGivesTheHostSamplersTokens) {
  SLUICE_REQUIRE_CUDA();
  const test::StoriesModel model;
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& text : test::alpaca_prompts(test::kIsEmulated ? 6 : 48))
    prompts.push_back(model.encode(text));
  const SamplingParams seeded{.n = 2,
                              .temperature = 0.9f,
                              .top_k = 40,
                              .top_p = 0.95f,
                              .min_p = 0.02f,
                              .repetition_penalty = 1.1f,
                              .frequency_penalty = 0.2f,
                              .seed = 99,
                              .max_tokens = test::kIsEmulated ? 24 : 48,
                              .logprobs = 3};
  CudaBackend backend(*model.session.model, fp32());
  Outputs runs[2];
  for (const bool on_device : {false, true}) {
    auto engine = make_engine(model, backend,
                              EngineConfig{.num_kv_blocks = 256, .sample_on_device = on_device});
    runs[on_device ? 1 : 0] = test::run_all(*engine, prompts, seeded);
  }
  ASSERT_EQ(runs[0].size(), runs[1].size());
  for (const auto& [key, host] : runs[0]) {
    const FinishedRequest& device = runs[1].at(key);
    EXPECT_EQ(device.output_token_ids, host.output_token_ids) << "prompt " << key.first;
    ASSERT_EQ(device.output_logprobs.size(), host.output_logprobs.size()) << "prompt " << key.first;
    for (size_t t = 0; t < host.output_logprobs.size(); ++t) {
      const TokenLogprobs& d = device.output_logprobs[t];
      const TokenLogprobs& h = host.output_logprobs[t];
      EXPECT_NEAR(d.logprob, h.logprob, 1e-5f) << "prompt " << key.first << ", token " << t;
      ASSERT_EQ(d.top.size(), 3u);
      for (size_t i = 0; i < h.top.size(); ++i) {
        EXPECT_EQ(d.top[i].first, h.top[i].first) << "prompt " << key.first << ", token " << t;
        EXPECT_NEAR(d.top[i].second, h.top[i].second, 1e-5f);
      }
    }
  }
}

// Constrained rows sample on the device too, their grammar masks built while the forward pass
// runs and uploaded with the sampling parameters: the same tokens as the host's mask and
// sampler, and every finished row valid (5 prompts per grammar on the emulator, 48 on a GPU).
TEST(CudaBackendEngine, ConstrainedRowsSampleOnTheDeviceAsOnTheHost) {
  SLUICE_REQUIRE_CUDA();
  const test::StoriesModel model;
  std::vector<std::vector<int32_t>> prompts;
  for (const auto& text : test::alpaca_prompts(test::kIsEmulated ? 5 : 48))
    prompts.push_back(model.encode(text));
  const auto schema = std::make_shared<const Grammar>(json_schema_grammar(
      R"({"type":"object","properties":{"name":{"type":"string","maxLength":6},
          "mood":{"enum":["happy","sad"]},"age":{"type":"integer","minimum":0,"maximum":99}},
          "required":["name","mood","age"]})",
      "schema.json"));
  const auto regex =
      std::make_shared<const Grammar>(regex_grammar(" [A-Z][a-z]{2,6} (is|was) [0-9]{1,2}", "re"));
  for (const auto& grammar : {schema, regex}) {
    const SamplingParams params{.temperature = 1.0f,
                                .top_p = 0.95f,
                                .repetition_penalty = 1.1f,
                                .seed = 5,
                                .max_tokens = 64};
    CudaBackend backend(*model.session.model, fp32());
    Outputs runs[2];
    for (const bool on_device : {false, true}) {
      auto engine = make_engine(model, backend,
                                EngineConfig{.num_kv_blocks = 256, .sample_on_device = on_device});
      runs[on_device ? 1 : 0] = test::run_all(*engine, prompts, params, nullptr, grammar);
    }
    EXPECT_GT(backend.step_counters().num_masked_rows, static_cast<int64_t>(prompts.size()) * 4);
    ASSERT_EQ(runs[0].size(), prompts.size());
    int num_valid = 0;
    for (const auto& [key, host] : runs[0]) {
      const FinishedRequest& device = runs[1].at(key);
      EXPECT_EQ(device.output_token_ids, host.output_token_ids) << "prompt " << key.first;
      EXPECT_EQ(device.finish_reason, host.finish_reason) << "prompt " << key.first << device.error;
      if (device.finish_reason == FinishReason::Stop) {
        EXPECT_TRUE(grammar_accepts_text(*grammar, device.output_text)) << device.output_text;
        ++num_valid;
      }
    }
    EXPECT_GT(num_valid, 0);
  }
}

// Sampling on the device draws what the host sampler draws from the same logits.
TEST(CudaBackendSampling, DeviceSamplingMatchesHostSampler) {
  SLUICE_REQUIRE_CUDA();
  const test::StoriesModel model;
  const int vocab = model.session.model->config.vocab_size;
  CudaBackend backend(*model.session.model, fp32());
  backend.allocate_kv_cache(16, kBlockSize);
  const std::vector<std::vector<int32_t>> prompts = {
      model.encode("Once upon a time"), model.encode("The little dog"), model.encode("Tom")};
  BatchInputs in;
  in.query_start_loc = {0};
  in.max_blocks_per_request = 4;
  for (size_t r = 0; r < prompts.size(); ++r) {
    for (size_t i = 0; i < prompts[r].size(); ++i) {
      in.token_ids.push_back(prompts[r][i]);
      in.positions.push_back(static_cast<int32_t>(i));
      in.slot_mapping.push_back(static_cast<int64_t>(r * 4) * kBlockSize + static_cast<int64_t>(i));
    }
    in.query_start_loc.push_back(in.num_tokens());
    in.seq_lens.push_back(static_cast<int32_t>(prompts[r].size()));
    for (int b = 0; b < 4; ++b) in.block_tables.push_back(static_cast<int32_t>(r * 4) + b);
    in.logits_indices.push_back(in.num_tokens() - 1);
  }
  std::vector<SamplingParams> params = {
      SamplingParams{},  // greedy
      SamplingParams{.temperature = 0.8f, .top_k = 20, .top_p = 0.9f, .seed = 42},
      SamplingParams{.temperature = 1.2f,
                     .min_p = 0.05f,
                     .repetition_penalty = 1.3f,
                     .presence_penalty = 0.5f,
                     .frequency_penalty = 0.25f,
                     .seed = 7}};
  // Log-probabilities on the device: the greedy row's 5 likeliest, none for the second, and the
  // 20 likeliest of the penalised row (the sampler changes its logits in place: the kernel must
  // read the raw ones).
  params[0].logprobs = 5;
  params[2].logprobs = 20;
  const std::vector<int32_t> outputs = {5, 9, 5};  // earlier outputs, for the penalties
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> logits;
    backend.forward(in, logits);
    std::vector<CudaSampleRow> rows;
    std::vector<int32_t> expected;
    Sampler sampler;
    for (size_t r = 0; r < prompts.size(); ++r) {
      const SamplingContext context{prompts[r], outputs, static_cast<uint64_t>(trial * 10 + r), 0};
      rows.push_back(CudaSampleRow{&params[r], context});
      std::vector<float> row(
          logits.begin() + static_cast<long>(r * static_cast<size_t>(vocab)),
          logits.begin() + static_cast<long>((r + 1) * static_cast<size_t>(vocab)));
      expected.push_back(sampler.sample(row, params[r], context));
    }
    std::vector<int32_t> sampled;
    std::vector<TokenLogprobs> logprobs;
    backend.forward_and_sample(in, rows, nullptr, sampled,
                               logprobs);  // the same K/V rewritten, the same logits
    EXPECT_EQ(sampled, expected) << "trial " << trial;
    ASSERT_EQ(logprobs.size(), prompts.size());
    for (size_t r = 0; r < prompts.size(); ++r) {
      if (params[r].logprobs < 0) {
        EXPECT_EQ(logprobs[r], TokenLogprobs{}) << "row " << r << " asked for none";
        continue;
      }
      const std::span<const float> raw(logits.data() + r * static_cast<size_t>(vocab),
                                       static_cast<size_t>(vocab));
      const TokenLogprobs host = token_logprobs(raw, sampled[r], params[r].logprobs);
      EXPECT_NEAR(logprobs[r].logprob, host.logprob, 1e-5f) << "row " << r;
      ASSERT_EQ(logprobs[r].top.size(), host.top.size()) << "row " << r;
      for (size_t i = 0; i < host.top.size(); ++i) {
        EXPECT_EQ(logprobs[r].top[i].first, host.top[i].first) << "row " << r << ", " << i;
        EXPECT_NEAR(logprobs[r].top[i].second, host.top[i].second, 1e-5f) << "row " << r;
      }
    }
  }
}

// The pool comes from gpu_memory_utilization after weights and activations, and StepStats
// reports the device's memory.
TEST(CudaBackendMemory, PoolFromUtilizationAndStatsReportDeviceMemory) {
  SLUICE_REQUIRE_CUDA();
  const test::StoriesModel model;
  auto backend = std::make_unique<CudaBackend>(*model.session.model, fp32());
  EngineConfig config{.max_num_seqs = 64, .max_num_batched_tokens = 512};
  config.gpu_memory_utilization = 0.5;
  config = fit_engine_to_backend(*backend, config);
  EXPECT_GT(config.kv_cache_bytes, 0u);
  const BackendMemory before = backend->memory();
  EXPECT_GT(before.activation_bytes, 0u);
  EXPECT_LE(before.device_total_bytes - before.device_free_bytes + config.kv_cache_bytes,
            static_cast<size_t>(0.5 * static_cast<double>(before.device_total_bytes)) + (1u << 20));
  Engine engine(model.session.model->config, *model.session.tokenizer, std::move(backend), config);
  engine.add_request(model.encode("Once upon a time"), SamplingParams{.max_tokens = 8}, 0);
  const StepResult step = engine.step();
  EXPECT_GT(step.stats.memory.device_total_bytes, 0u);
  EXPECT_LE(step.stats.memory.device_free_bytes, step.stats.memory.device_total_bytes);
  EXPECT_GE(step.stats.memory.kv_cache_bytes, config.kv_cache_bytes);
  EXPECT_NE(engine.backend().describe().find("cuda:0"), std::string::npos);
}

}  // namespace
}  // namespace sluice
