// `sluice bench` end to end: the table's numbers agree with the work asked for, and a GPU run
// that cannot happen is refused at once with the device named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

const char* kGgufF32 = "models/stories260K/gguf/stories260K-f32.gguf";

TEST(BenchCli, JsonCountsEveryRequestAndTokenPerMode) {
  const auto r = run_sluice({"bench", "--model", shared_path(kGgufF32), "--input",
                             shared_path("datasets/en/alpaca_5000.json"), "--limit", "6", "--max-tokens", "8",
                             "--ignore-eos", "--modes", "sequential,static,continuous", "--static-batch", "4",
                             "--json"});
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

// No machine has a hundred GPUs; the refusal comes before any weights are built.
TEST(BenchCli, RooflineOnAMissingGpuIsRefusedWithTheDeviceNamed) {
  const auto r = run_sluice({"bench", "--roofline", "--device", "cuda:99", "--dummy-weights", "llama-3-8b",
                             "--input", shared_path("datasets/en/alpaca_5000.json"), "--limit", "4"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cuda:99"));
}

TEST(BenchCli, UsageErrorsExitWithTwo) {
  const std::string input = shared_path("datasets/en/alpaca_5000.json");
  auto r = run_sluice({"bench", "--model", shared_path(kGgufF32), "--dummy-weights", "stories15M", "--input", input});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not both"));
  r = run_sluice({"bench", "--roofline", "--device", "cpu", "--dummy-weights", "stories15M", "--input", input});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--device cuda"));
  r = run_sluice({"bench", "--dummy-weights", "stories15M", "--dummy-dtype", "q4", "--input", input});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace sluice::test
