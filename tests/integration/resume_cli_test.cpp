// A job survives kill -9: `sluice generate --job` on 500 rows is killed mid-run, then resumed.
// No finished row is lost or computed twice, and the output equals an uninterrupted run's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <thread>

#include "engine/jobs/job_store.h"
#include "tests/integration/cli_test_util.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

std::string write_alpaca_jsonl(const std::string& dir, size_t n) {
  std::string jsonl;
  size_t i = 0;
  for (const auto& prompt : alpaca_prompts(n)) jsonl += nlohmann::json{{"id", "row-" + std::to_string(i++)}, {"prompt", prompt}}.dump() + "\n";
  write_file(dir + "/input.jsonl", jsonl);
  return dir + "/input.jsonl";
}

// Every field but the timings.
nlohmann::json without_timings(nlohmann::json row) {
  row.erase("timings");
  return row;
}

int64_t committed_rows(const std::string& job_path) {
  try {
    return JobStore::open(job_path)->counts().done;
  } catch (const std::exception&) {
    return 0;  // not created yet
  }
}

TEST(ResumeCli, KilledJobResumesWithoutLosingOrRecomputingRows) {
  const std::string dir = make_temp_dir("resume");
  const std::string input = write_alpaca_jsonl(dir, 500);
  const std::string model = shared_path("models/stories260K/gguf/stories260K-f32.gguf");
  const std::vector<std::string> common = {"--model", model, "--input", input, "--max-tokens", "48",
                                           "--max-num-seqs", "16", "--threads", "1"};
  auto args = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = {SLUICE_EXECUTABLE, "generate"};
    a.insert(a.end(), common.begin(), common.end());
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };

  const auto reference = run_process(args({"--output", dir + "/reference.jsonl", "--quiet"}));
  ASSERT_EQ(reference.exit_code, 0) << reference.err;

  const std::string job = dir + "/run.sluicejob";
  int64_t before_kill = 0;
  {
    BackgroundProcess run(args({"--job", job, "--output", dir + "/out.jsonl"}));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
    while (run.is_running() && std::chrono::steady_clock::now() < deadline) {
      if (committed_rows(job) >= 64) break;  // at least one batch committed
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(run.is_running()) << "the run finished before it could be killed";
    EXPECT_EQ(run.kill_now(), 128 + SIGKILL);
  }
  before_kill = JobStore::open(job)->counts().done;  // the file opens cleanly after kill -9
  ASSERT_GE(before_kill, 64);
  ASSERT_LT(before_kill, 500);

  const auto resumed = run_process({SLUICE_EXECUTABLE, "generate", "--resume", job, "--output", dir + "/out.jsonl"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  // The resumed run computes exactly the rows the job did not hold.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(resumed.err, m, std::regex("done: (\\d+) rows .* (\\d+) already in the job")))
      << resumed.err;
  EXPECT_EQ(std::stoll(m[1]), 500 - before_kill);
  EXPECT_EQ(std::stoll(m[2]), before_kill);
  EXPECT_EQ(JobStore::open(job)->counts().done, 500);

  const auto expected = read_jsonl(dir + "/reference.jsonl");
  const auto actual = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(without_timings(actual[i]), without_timings(expected[i])) << i;
}

}  // namespace
}  // namespace sluice::test
