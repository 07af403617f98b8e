// A job survives kill -9: `sluice generate --job` on 500 rows is killed mid-run, then resumed.
// No finished row is lost or computed twice, and the output equals an uninterrupted run's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <regex>
#include <thread>

#include "engine/jobs/job_store.h"
#include "engine/jobs/job_table.h"
#include "tests/integration/cli_test_util.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

// n rows of Alpaca prompts; past 1,500 the first 1,500 again (row 1,760 of the file is longer
// than stories260K's context).
std::string write_alpaca_jsonl(const std::string& dir, size_t n) {
  const std::vector<std::string> prompts = alpaca_prompts(std::min<size_t>(n, 1500));
  std::string jsonl;
  for (size_t i = 0; i < n; ++i)
    jsonl +=
        nlohmann::json{{"id", "row-" + std::to_string(i)}, {"prompt", prompts[i % prompts.size()]}}
            .dump() +
        "\n";
  write_file(dir + "/input.jsonl", jsonl);
  return dir + "/input.jsonl";
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

// Returns the rows committed to job_path as another connection sees them (0 while there is no
// job file yet).
int64_t rows_in_file(const std::string& job_path) {
  try {
    return JobTable::open(job_path)->count({});
  } catch (const std::exception&) {
    return 0;
  }
}

// Keep them closed: a 4,000-row job killed with SIGKILL 20 times at random moments and resumed
// each time ends with the export an uninterrupted run writes, byte for byte (greedy decoding).
// Six kills land in a run's first 200 ms or around the creation of its job file (within 1 ms of
// its appearance when the run creates it); of the others, some land a random moment after a
// run's next commit (while there is work left), the rest anywhere in its start-up, at the
// latest at its first commit.
TEST(ResumeCli, TwentyKillsAtRandomMomentsChangeNoByteOfTheExport) {
  constexpr int kNumKills = 20;
  constexpr int kNumEarlyKills = 6;
  // Enough rows that twenty kills come before the end on a fast, idle machine too: a run killed
  // up to 100 ms after a commit can commit a few hundred rows first (1,500 rows were all
  // committed before the twentieth kill once).
  constexpr int64_t kNumRows = 4000;
  const std::string dir = make_temp_dir("resume-kills");
  const std::string input = write_alpaca_jsonl(dir, kNumRows);
  const std::string model = shared_path("models/stories260K/gguf/stories260K-f32.gguf");
  const auto fresh_args = [&](const std::string& job) {
    return std::vector<std::string>{
        SLUICE_EXECUTABLE, "generate", "--model",        model, "--input",   input, "--job",  job,
        "--max-tokens",    "6",        "--max-num-seqs", "16",  "--threads", "1",   "--quiet"};
  };
  const auto resume_args = [&](const std::string& job) {
    return std::vector<std::string>{SLUICE_EXECUTABLE, "generate", "--resume", job,
                                    "--threads",       "1",        "--quiet"};
  };
  const auto export_of = [&](const std::string& job) {
    const std::string out = job + ".openai.jsonl";
    const auto r = run_sluice({"jobs", "export", job, "--format", "openai", "--output", out});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return read_file(out);
  };

  // The uninterrupted run, with how long its job file takes to appear (model, input, engine).
  using Clock = std::chrono::steady_clock;
  const std::string reference_job = dir + "/reference.sluicejob";
  const auto reference_start = Clock::now();
  BackgroundProcess reference(fresh_args(reference_job));
  while (!std::filesystem::exists(reference_job) && reference.is_running())
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const int64_t startup_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - reference_start).count();
  const auto reference_result = reference.wait();
  ASSERT_EQ(reference_result.exit_code, 0) << reference_result.err;
  const std::string expected = export_of(reference_job);

  // A new seed each run finds more; SLUICE_TEST_SEED replays one.
  const char* seed_text = std::getenv("SLUICE_TEST_SEED");
  const uint32_t seed =
      seed_text != nullptr ? static_cast<uint32_t>(std::stoul(seed_text)) : std::random_device{}();
  SCOPED_TRACE("SLUICE_TEST_SEED=" + std::to_string(seed));
  std::mt19937 random(seed);
  std::uniform_int_distribution<int64_t> first_ms(0, 200);
  std::uniform_int_distribution<int64_t> creation_us(0, 1000);
  std::uniform_int_distribution<int64_t> creation_ms(std::max<int64_t>(0, startup_ms - 50),
                                                     startup_ms + 200);
  std::uniform_int_distribution<int64_t> anywhere_ms(0, startup_ms + 300);
  std::uniform_int_distribution<int64_t> after_commit_ms(0, 100);
  std::bernoulli_distribution is_after_commit(0.5);

  const std::string job = dir + "/run.sluicejob";
  int num_kills = 0;
  int64_t num_committed = 0;
  while (num_kills < kNumKills) {
    const bool is_fresh = !std::filesystem::exists(job);
    BackgroundProcess run(is_fresh ? fresh_args(job) : resume_args(job));
    if (num_kills < kNumEarlyKills && num_kills % 2 == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(first_ms(random)));
    } else if (num_kills < kNumEarlyKills && is_fresh) {
      // Within a few milliseconds of the job file's appearance: where a file without its first
      // commit would be.
      while (!std::filesystem::exists(job) && run.is_running())
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      std::this_thread::sleep_for(std::chrono::microseconds(creation_us(random)));
    } else if (num_kills < kNumEarlyKills) {
      std::this_thread::sleep_for(std::chrono::milliseconds(creation_ms(random)));
    } else if (num_committed < kNumRows / 3 && is_after_commit(random)) {
      while (run.is_running() && rows_in_file(job) <= num_committed)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      std::this_thread::sleep_for(std::chrono::milliseconds(after_commit_ms(random)));
    } else {
      // At a random moment, or at the run's first commit if that comes sooner: so that twenty
      // kills happen before the job is done.
      const auto deadline = Clock::now() + std::chrono::milliseconds(anywhere_ms(random));
      while (Clock::now() < deadline && run.is_running() && rows_in_file(job) <= num_committed)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!run.is_running()) {
      const auto r = run.wait();
      ASSERT_EQ(r.exit_code, 0) << r.err;
      FAIL() << "the job finished after " << num_kills << " kills; kill sooner";
    }
    EXPECT_EQ(run.kill_now(), 128 + SIGKILL);
    ++num_kills;
    if (!std::filesystem::exists(job)) continue;  // killed before the job file appeared
    // After every kill the file opens, and what was committed stays committed.
    const int64_t now_committed = JobStore::open(job)->counts().done;
    EXPECT_GE(now_committed, num_committed) << "kill " << num_kills;
    num_committed = now_committed;
  }
  ASSERT_LT(num_committed, kNumRows);

  const auto last = run_process(std::filesystem::exists(job) ? resume_args(job) : fresh_args(job));
  ASSERT_EQ(last.exit_code, 0) << last.err;
  EXPECT_EQ(JobStore::open(job)->counts().done, kNumRows);
  const std::string actual = export_of(job);
  EXPECT_EQ(actual.size(), expected.size());
  EXPECT_TRUE(actual == expected) << "the export differs from the uninterrupted run's";
}

}  // namespace
}  // namespace sluice::test
