// JobLock (issue 27): one writer per job. A second taker is refused naming the job file and the
// holder's pid; a record left by a holder that died (its flock went with it) is taken over and
// reported; a clean release leaves no lock file; a directory is refused as a job path; under
// contention there is never more than one holder.
#include "engine/jobs/job_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "tests/support/test_paths.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::string lock_test_job(const std::string& name) {
  return test::make_temp_dir("job-lock") + "/" + name + ".sluicejob";
}

// What a holder killed with -9 leaves: its record in the lock file, no flock.
void write_dead_holder_record(const std::string& job, int64_t pid) {
  test::write_file(
      job_lock_path(job),
      str_cat(R"({"pid":)", pid, R"(,"host":"elsewhere","since":"2025-01-31T12:00:00Z"})", "\n"));
}

TEST(JobLock, ASecondTakerIsRefusedNamingTheJobAndTheHoldersPid) {
  const std::string job = lock_test_job("held");
  const auto held = JobLock::acquire(job);
  EXPECT_FALSE(held->taken_over().has_value());
  EXPECT_TRUE(std::filesystem::exists(job_lock_path(job)));
  try {
    JobLock::acquire(job);
    FAIL() << "a held job was locked twice";
  } catch (const JobInUse& e) {
    EXPECT_EQ(e.holder().pid, ::getpid());
    EXPECT_THAT(e.what(), HasSubstr(job));
    EXPECT_THAT(e.what(), HasSubstr(str_cat("pid ", ::getpid())));
  }
}

// Another process's lock, as a refused taker sees it: the flock held and the holder's record.
TEST(JobLock, AnotherProcesssLockIsNamedByItsPidAndHost) {
  const std::string job = lock_test_job("other");
  const auto held = JobLock::acquire(job);
  write_dead_holder_record(job, 4242);  // the record of "another process" on another host
  try {
    JobLock::acquire(job);
    FAIL() << "a held job was locked twice";
  } catch (const JobInUse& e) {
    EXPECT_EQ(e.holder().pid, 4242);
    EXPECT_EQ(e.holder().host, "elsewhere");
    EXPECT_THAT(e.what(), HasSubstr(job + ": in use by process 4242 on host elsewhere"));
    EXPECT_THAT(e.what(), HasSubstr("kill 4242"));
  }
}

TEST(JobLock, AReleasedJobIsFreeAndLeavesNoLockFile) {
  const std::string job = lock_test_job("released");
  JobLock::acquire(job).reset();
  EXPECT_FALSE(std::filesystem::exists(job_lock_path(job)));
  const auto again = JobLock::acquire(job);
  EXPECT_FALSE(again->taken_over().has_value());
}

// A holder killed with -9 loses its flock with its life but leaves its record: the next taker
// gets the job and says whose it was.
TEST(JobLock, ADeadHoldersRecordIsTakenOverAndReported) {
  const std::string job = lock_test_job("stale");
  write_dead_holder_record(job, 4243);
  const auto lock = JobLock::acquire(job);
  ASSERT_TRUE(lock->taken_over().has_value());
  EXPECT_EQ(lock->taken_over()->pid, 4243);
  EXPECT_EQ(lock->taken_over()->host, "elsewhere");
  EXPECT_THAT(describe_job_lock_holder(*lock->taken_over()),
              HasSubstr("process 4243 on host elsewhere (since 2025-01-31T12:00:00Z)"));
  // The file now names this process.
  EXPECT_THAT(test::read_file(job_lock_path(job)), HasSubstr(str_cat("\"pid\":", ::getpid())));
}

TEST(JobLock, ADirectoryIsNotAJob) {
  const std::string dir = test::make_temp_dir("job-lock-dir");
  try {
    JobLock::acquire(dir);
    FAIL() << "a directory was locked as a job";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(dir + ": is a directory, not a job file"));
  }
  EXPECT_FALSE(std::filesystem::exists(job_lock_path(dir))) << "a stray lock file beside it";
}

TEST(JobLock, AMissingDirectoryIsNamed) {
  const std::string dir = test::make_temp_dir("job-lock-missing") + "/gone";
  try {
    JobLock::acquire(dir + "/run.sluicejob");
    FAIL() << "a job in a missing directory was locked";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no such directory " + dir));
  }
}

// Takers race to lock and release one job: never two hold it at once. (A smoke test of the
// whole: the narrow race it also covers, a taker locking the file a releasing holder has just
// removed, is rarely hit here.)
TEST(JobLock, NeverTwoHoldersAtOnceUnderContention) {
  const std::string job = lock_test_job("contended");
  constexpr int kNumThreads = 4;
  constexpr int kNumRounds = 300;
  std::atomic<int> num_holders{0};
  std::atomic<int> max_holders{0};
  std::atomic<int> num_acquired{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kNumThreads; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < kNumRounds; ++round) {
        std::unique_ptr<JobLock> lock;
        try {
          lock = JobLock::acquire(job);
        } catch (const JobInUse&) {
          continue;
        }
        const int now = ++num_holders;
        for (int seen = max_holders.load();
             now > seen && !max_holders.compare_exchange_weak(seen, now);) {
        }
        ++num_acquired;
        std::this_thread::sleep_for(std::chrono::microseconds(20));  // overlap, were it possible
        --num_holders;
        lock.reset();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(max_holders.load(), 1);
  EXPECT_GT(num_acquired.load(), 0);
  EXPECT_FALSE(std::filesystem::exists(job_lock_path(job)));
}

}  // namespace
}  // namespace sluice
