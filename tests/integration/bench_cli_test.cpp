// `sluice bench` end to end: the table's numbers agree with the work asked for, and a GPU run
// that cannot happen is refused at once with the device named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

TEST(BenchCli, JsonCountsEveryRequestAndTokenPerMode) {
  const auto r = run_sluice({"bench", "--model", shared_path(kGgufF32), "--input",
                             shared_path("datasets/en/alpaca_5000.json"), "--limit", "6",
                             "--max-tokens", "8", "--ignore-eos", "--modes",
                             "sequential,static,continuous", "--static-batch", "4", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = nlohmann::json::parse(r.out);
  ASSERT_EQ(report["modes"].size(), 3u);
  for (const auto& mode : report["modes"]) {
    EXPECT_EQ(mode["requests"], 6) << mode["mode"];
    EXPECT_EQ(mode["output_tokens"], 6 * 8) << mode["mode"];  // --ignore-eos: exactly max tokens
    EXPECT_GT(mode["output_tokens_per_s"].get<double>(), 0.0);
  }
  EXPECT_EQ(report["modes"][0]["mean_batch"], 1.0);  // sequential
  EXPECT_EQ(report["modes"][0]["steps"], 6 * 8);
  EXPECT_LT(report["modes"][2]["steps"].get<int>(), 6 * 8);  // continuous batches the rows
}

// A hybrid model (Qwen3.5) runs the batched bench through the engine's borrowed backend: its
// state slots are allocated on the lender, every prompt prefilled and decoded.
TEST(BenchCli, BatchedRunsAHybridModel) {
  const auto r = run_sluice(
      {"bench", "--model", shared_path("models/tiny-arch/qwen35/gguf/qwen35-F32.gguf"), "--batched",
       "1,4", "--prompt-tokens", "70", "--max-tokens", "5", "--threads", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = nlohmann::json::parse(r.out);
  ASSERT_EQ(report["runs"].size(), 2u);
  EXPECT_EQ(report["runs"][1]["prefill_tokens"], 4 * 70);
  EXPECT_EQ(report["runs"][1]["decode_steps"], 4);
}

// --batched reads as llama-batched-bench: B prompts of P tokens prefilled, then every request
// decodes max_tokens - 1 more tokens in steps of the whole batch.
TEST(BenchCli, BatchedCountsPromptAndDecodeTokensPerBatch) {
  const auto r =
      run_sluice({"bench", "--model", shared_path(kGgufF32), "--batched", "1,3", "--prompt-tokens",
                  "20", "--max-tokens", "7", "--threads", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = nlohmann::json::parse(r.out);
  ASSERT_EQ(report["runs"].size(), 2u);
  for (const auto& run : report["runs"]) {
    const int batch = run["batch"];
    EXPECT_EQ(run["prompt_length"], 20);
    EXPECT_EQ(run["prefill_tokens"], 20 * batch);
    EXPECT_EQ(run["decode_steps"], 6) << batch;  // the first token comes with the prefill
    EXPECT_GT(run["prefill_tokens_per_s"].get<double>(), 0.0);
    EXPECT_GT(run["decode_tokens_per_s"].get<double>(), 0.0);
    // decode tok/s = batch x steps / decode time, so step ms x tok/s = 1000 x batch.
    EXPECT_NEAR(run["decode_step_ms"].get<double>() * run["decode_tokens_per_s"].get<double>(),
                1000.0 * batch, 1e-6 * batch);
    // The share of the floor: the floor step over the decode step, so at most a little over 1
    // (a step cannot stream its weights faster than memory reads; caches blur a tiny model).
    EXPECT_NEAR(run["decode_share_of_floor"].get<double>() * run["decode_step_ms"].get<double>(),
                report["floor_step_ms"].get<double>(), 1e-9);
  }
  // The probe: a host read bandwidth between 100 MB/s and 10 TB/s, and the weights a step streams
  // (stories260K in F32: 5 layers of q and o 64 x 64, k and v 32 x 64, gate, up and down 172 x 64,
  // and the LM head 512 x 64, 4 bytes each).
  EXPECT_GT(report["read_bandwidth_bytes_per_s"].get<double>(), 1e8);
  EXPECT_LT(report["read_bandwidth_bytes_per_s"].get<double>(), 1e13);
  EXPECT_NE(report["read_bandwidth_probe"].get<std::string>().find("host read, 1 thread"),
            std::string::npos);
  EXPECT_GE(report["weight_bytes_held"].get<size_t>(),
            static_cast<size_t>(report["weight_bytes_per_step"].get<double>()));
  EXPECT_EQ(report["weight_bytes_per_step"].get<double>(),
            4.0 * (5 * (2 * 64 * 64 + 2 * 32 * 64 + 3 * 172 * 64) + 512 * 64));
  EXPECT_EQ(report["runs"][1]["batch"], 3);
  const auto usage = run_sluice({"bench", "--model", shared_path(kGgufF32), "--batched", "0"});
  EXPECT_EQ(usage.exit_code, 2);
}

// A mixture of experts' decode floor counts the experts one token uses: tiny-qwen3moe in F32 is
// 2 layers of q 512 x 256, k and v 256 x 256, o 256 x 512, the router 4 x 256 and 2 of its 4
// experts' gate, up and down 256 x 256, and the LM head 512 x 256, 4 bytes each.
TEST(BenchCli, BatchedFloorOfAMixtureOfExpertsCountsTheExpertsATokenUses) {
  const auto r = run_sluice({"bench", "--dummy-weights", "tiny-qwen3moe", "--dummy-dtype", "f32",
                             "--device", "cpu", "--batched", "1", "--prompt-tokens", "8",
                             "--max-tokens", "3", "--threads", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = nlohmann::json::parse(r.out);
  const double per_layer =
      2 * 512 * 256 + 2 * 256 * 256 + 4 * 256 + 2 * 3 * 256 * 256;  // attention, router, experts
  EXPECT_EQ(report["weight_bytes_per_step"].get<double>(), 4.0 * (2 * per_layer + 512 * 256));
}

// No machine has a hundred GPUs; the refusal comes before any weights are built.
TEST(BenchCli, RooflineOnAMissingGpuIsRefusedWithTheDeviceNamed) {
  const auto r =
      run_sluice({"bench", "--roofline", "--device", "cuda:99", "--dummy-weights", "llama-3-8b",
                  "--input", shared_path("datasets/en/alpaca_5000.json"), "--limit", "4"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cuda:99"));
}

TEST(BenchCli, UsageErrorsExitWithTwo) {
  const std::string input = shared_path("datasets/en/alpaca_5000.json");
  auto r = run_sluice({"bench", "--model", shared_path(kGgufF32), "--dummy-weights", "stories15M",
                       "--input", input});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not both"));
  r = run_sluice({"bench", "--roofline", "--device", "cpu", "--dummy-weights", "stories15M",
                  "--input", input});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--device cuda"));
  r = run_sluice(
      {"bench", "--dummy-weights", "stories15M", "--dummy-dtype", "q4", "--input", input});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace sluice::test
