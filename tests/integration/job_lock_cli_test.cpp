// Issue 27: two `generate --resume` on one job each ran all the remaining rows (twice the
// compute; a remote job billed twice). A running job is locked: a second process refuses it at
// once, naming the job file and the holder's pid (exit 1); `jobs show` and `jobs export` still
// read it meanwhile; after the holder is killed with -9 the next resume takes the job over, says
// so, and finishes it with every row once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <regex>
#include <thread>

#include "engine/jobs/job_lock.h"
#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Enough rows that each run is still going when the test kills it: 4000 in a release build, 1000
// in the sanitizer build, which runs them several times slower (4000 took 100 s there).
#if defined(__SANITIZE_ADDRESS__)
constexpr int64_t kLockedJobRows = 1000;
#else
constexpr int64_t kLockedJobRows = 4000;
#endif

std::string write_locked_job_input(const std::string& dir) {
  std::string jsonl;
  for (int64_t i = 0; i < kLockedJobRows; ++i)
    jsonl +=
        nlohmann::json{{"id", i},
                       {"prompt", "Once upon a time there was a cat number " + std::to_string(i)}}
            .dump() +
        "\n";
  return write_input_jsonl(dir, jsonl);
}

// Waits until the job file holds more than n rows or the run ends; returns the rows it holds.
int64_t wait_for_more_rows(BackgroundProcess& run, const std::string& job, int64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  int64_t rows = committed_rows(job);
  while (rows <= n && run.is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    rows = committed_rows(job);
  }
  return rows;
}

// Returns the pid a "process N" in text names, or 0.
int64_t named_pid(const std::string& text) {
  std::smatch match;
  if (!std::regex_search(text, match, std::regex("process (\\d+)"))) return 0;
  return std::stoll(match[1]);
}

// The command line of a running process, its arguments joined by spaces.
std::string command_line_of(int64_t pid) {
  std::string text = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  for (char& c : text) c = c == '\0' ? ' ' : c;
  return text;
}

TEST(JobLockCli, ASecondResumeIsRefusedNamingTheHolderAndADeadHolderIsTakenOver) {
  const std::string dir = make_temp_dir("job-lock-cli");
  const std::string input = write_locked_job_input(dir);
  const std::string job = dir + "/run.sluicejob";
  const std::vector<std::string> tuning = {"--threads", "1", "--max-num-seqs", "4"};
  const auto sluice_args = [&](std::vector<std::string> args) {
    args.insert(args.begin(), SLUICE_EXECUTABLE);
    args.insert(args.end(), tuning.begin(), tuning.end());
    return args;
  };
  {  // A first run, killed mid-way: the job then holds some rows and a dead holder's record.
    BackgroundProcess fresh(sluice_args({"generate", "--model", shared_path(kGgufF32), "--input",
                                         input, "--job", job, "--max-tokens", "32", "--quiet"}));
    ASSERT_GT(wait_for_more_rows(fresh, job, 0), 0);
    ASSERT_TRUE(fresh.is_running()) << "the first run finished before it could be killed";
    EXPECT_EQ(fresh.kill_now(), 128 + SIGKILL);
  }
  const int64_t after_kill = committed_rows(job);
  BackgroundProcess first(sluice_args({"generate", "--resume", job}));
  ASSERT_GT(wait_for_more_rows(first, job, after_kill), after_kill);
  ASSERT_TRUE(first.is_running()) << "the first resume finished before a second could start";

  const auto second =
      run_process(sluice_args({"generate", "--resume", job, "--output", dir + "/second.jsonl"}));
  EXPECT_EQ(second.exit_code, 1) << second.err;
  EXPECT_THAT(second.err, HasSubstr(job + ": in use by process"));
  const int64_t holder = named_pid(second.err);
  ASSERT_GT(holder, 0) << second.err;
  EXPECT_THAT(command_line_of(holder), HasSubstr("generate --resume " + job));
  EXPECT_THAT(second.err, Not(HasSubstr("model:")));  // refused before loading anything
  EXPECT_FALSE(std::filesystem::exists(dir + "/second.jsonl"));

  // Readers take no lock: they work while the job runs.
  const auto shown = run_sluice({"jobs", "show", job});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr("state: running in process " + std::to_string(holder)));
  const auto exported =
      run_sluice({"jobs", "export", job, "--format", "jsonl", "--output", dir + "/live.jsonl"});
  EXPECT_EQ(exported.exit_code, 0) << exported.err;

  ASSERT_TRUE(first.is_running()) << "the first resume finished before it could be killed";
  EXPECT_EQ(first.kill_now(), 128 + SIGKILL);
  EXPECT_TRUE(std::filesystem::exists(job_lock_path(job)));  // the dead holder's record
  const auto last =
      run_process(sluice_args({"generate", "--resume", job, "--output", dir + "/out.jsonl"}));
  ASSERT_EQ(last.exit_code, 0) << last.err;
  EXPECT_THAT(last.err, HasSubstr(job + ": taking over from process " + std::to_string(holder)));
  EXPECT_EQ(read_jsonl(dir + "/out.jsonl").size(), static_cast<size_t>(kLockedJobRows));
  EXPECT_EQ(JobStore::open(job)->counts().done, kLockedJobRows);
  EXPECT_FALSE(std::filesystem::exists(job_lock_path(job))) << "a clean exit leaves no lock file";
}

// `--job` naming a directory said "a job file already exists"; it says what is wrong.
TEST(JobLockCli, AJobPathThatIsADirectoryIsNamedAsOne) {
  const std::string dir = make_temp_dir("job-lock-dir");
  const std::string input = write_input_jsonl(dir, "{\"prompt\": \"Once upon a time\"}\n");
  const std::string jobs = dir + "/jobs";
  std::filesystem::create_directory(jobs);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"generate", "--model", shared_path(kGgufF32), "--input", input, "--job", jobs},
           {"generate", "--resume", jobs}}) {
    const auto result = run_sluice(args);
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_THAT(result.err, HasSubstr(jobs + ": is a directory, not a job file"));
    EXPECT_THAT(result.err, Not(HasSubstr("already exists")));
  }
  EXPECT_FALSE(std::filesystem::exists(jobs + ".lock"));
}

}  // namespace
}  // namespace sluice::test
