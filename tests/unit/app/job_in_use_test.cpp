// Issue 27: two processes resuming one job both ran every remaining row. A GenerationJob holds
// its job's lock (engine/jobs/job_lock.h) from create() or resume() until run() returns, so a
// second one is refused naming the holder's pid; the app's worker shows that refusal as a failed
// job instead of running it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "app/engine_worker.h"
#include "app/generation_job.h"
#include "engine/jobs/job_lock.h"
#include "tests/unit/app/job_test_util.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

// A short greedy job over num_rows Alpaca prompts on stories260K.
GenerationSpec job_in_use_spec(const std::string& dir, size_t num_rows) {
  GenerationSpec spec = stories_spec(dir, num_rows);
  spec.sampling.max_tokens = 8;
  spec.engine.max_num_seqs = EngineConfig{}.max_num_seqs;
  return spec;
}

// Holds path's lock as another process would: the flock, and a record naming pid 4242.
std::unique_ptr<JobLock> hold_as_another_process(const std::string& path) {
  auto lock = JobLock::acquire(path);
  write_file(job_lock_path(path), R"({"pid":4242,"host":"","since":"2025-01-31T12:00:00Z"})");
  return lock;
}

TEST(JobInUse, ResumeAndCreateAreRefusedWhileAnotherProcessHoldsTheJob) {
  const std::string dir = make_temp_dir("job-in-use");
  const std::string path = dir + "/job.sluicejob";
  const GenerationSpec spec = job_in_use_spec(dir, 4);
  {
    auto job = GenerationJob::create(spec, path);
    job->load(lend_alone(job->spec()));
    job->run(nullptr, nullptr);
  }
  const auto other = hold_as_another_process(path);
  try {
    GenerationJob::resume(path, "cpu", 1);
    FAIL() << "a job in use was resumed";
  } catch (const JobInUse& e) {
    EXPECT_THAT(e.what(), HasSubstr(path + ": in use by process 4242"));
  }
  const std::string fresh = dir + "/fresh.sluicejob";
  const auto other_fresh = hold_as_another_process(fresh);
  EXPECT_THROW(GenerationJob::create(spec, fresh), JobInUse);
  EXPECT_FALSE(std::filesystem::exists(fresh));
}

// The lock lasts from resume() until run() returns: the app keeps a finished job (to run rows
// alone), which must not keep others from the job.
TEST(JobInUse, TheLockIsHeldUntilRunReturns) {
  const std::string dir = make_temp_dir("job-in-use-run");
  const std::string path = dir + "/job.sluicejob";
  auto first = GenerationJob::create(job_in_use_spec(dir, 4), path);
  EXPECT_THROW(JobLock::acquire(path), JobInUse);  // before load(): the file is not there yet
  first->load(lend_alone(first->spec()));
  EXPECT_THROW(GenerationJob::resume(path, "cpu", 1), JobInUse);
  first->run(nullptr, nullptr);
  auto second = GenerationJob::resume(path, "cpu", 1);
  EXPECT_FALSE(second->lock_taken_over().has_value());
}

TEST(JobInUse, ADeadHoldersLockIsTakenOverAndSaidSo) {
  const std::string dir = make_temp_dir("job-in-use-stale");
  const std::string path = dir + "/job.sluicejob";
  write_file(job_lock_path(path), R"({"pid":4243,"host":"","since":"2025-01-31T12:00:00Z"})");
  auto job = GenerationJob::create(job_in_use_spec(dir, 2), path);
  ASSERT_TRUE(job->lock_taken_over().has_value());
  EXPECT_EQ(job->lock_taken_over()->pid, 4243);
}

// The app's path: the worker reports the refusal as a failed job (the window shows it as an
// error), starts nothing and goes on working.
TEST(JobInUse, TheWorkerReportsAJobInUseAsFailed) {
  const std::string dir = make_temp_dir("job-in-use-worker");
  const std::string path = dir + "/job.sluicejob";
  const GenerationSpec spec = job_in_use_spec(dir, 3);
  EngineWorker worker;
  QString failure;
  bool has_started = false;
  int num_finished = 0;
  QObject::connect(&worker, &EngineWorker::jobFailed,
                   [&](quint64, const QString& message) { failure = message; });
  QObject::connect(&worker, &EngineWorker::jobStarted,
                   [&](quint64, const QString&, const QString&) { has_started = true; });
  QObject::connect(&worker, &EngineWorker::jobFinished,
                   [&](quint64, const JobProgress&, bool) { ++num_finished; });
  worker.runJob(1, spec, QString::fromStdString(path), false);
  ASSERT_EQ(num_finished, 1) << failure.toStdString();
  {
    const auto other = hold_as_another_process(path);
    has_started = false;
    worker.runJob(2, spec, QString::fromStdString(path), true);
    EXPECT_FALSE(has_started);
    EXPECT_THAT(failure.toStdString(), HasSubstr(path + ": in use by process 4242"));
  }
  failure.clear();
  worker.runJob(3, spec, QString::fromStdString(path), true);  // free again
  EXPECT_TRUE(failure.isEmpty()) << failure.toStdString();
  EXPECT_EQ(num_finished, 2);
}

}  // namespace
}  // namespace sluice::test
