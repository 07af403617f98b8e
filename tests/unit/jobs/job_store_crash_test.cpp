// A job must survive its process being killed: fork a child that writes results, SIGKILL it,
// and check that what it committed is there and the file is sound.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "engine/jobs/job_store.h"
#include "engine/jobs/sqlite_db.h"
#include "tests/support/test_paths.h"
#include "tests/unit/jobs/job_test_rows.h"

namespace sluice {
namespace {

// Forks a child that runs body(ready_fd) and never returns; body writes one byte to ready_fd when
// the parent may kill it. Returns the child's pid after that byte arrived.
template <typename Body>
pid_t start_child(Body&& body) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(pipe_fds[0]);
    try {
      body(pipe_fds[1]);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(4);  // body must wait to be killed
  }
  ::close(pipe_fds[1]);
  char byte = 0;
  const ssize_t num_read = ::read(pipe_fds[0], &byte, 1);
  ::close(pipe_fds[0]);
  if (num_read != 1) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    throw std::runtime_error("child ended before it was ready, status " + std::to_string(status));
  }
  return pid;
}

void kill_child(pid_t pid) {
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

void signal_ready(int fd) {
  const char byte = 'r';
  if (::write(fd, &byte, 1) != 1) ::_exit(5);
}

void expect_sound(const std::string& path) {
  SqliteDb db(path, SqliteDb::Mode::OpenExisting);
  SqliteStatement check(db, "PRAGMA integrity_check");
  ASSERT_TRUE(check.step());
  EXPECT_EQ(check.column_text(0), "ok");
}

TEST(JobStoreCrash, CommittedRowsSurviveKill9) {
  const std::string path = test::make_temp_dir("job-crash") + "/job.sluicejob";
  const pid_t pid = start_child([&](int ready_fd) {
    const auto store = JobStore::create(path, test::make_job_info());
    for (int64_t i = 0; i < 100; ++i) store->add_result(test::make_row(i));  // 0..63 committed
    std::this_thread::sleep_for(JobStore::kCommitInterval + std::chrono::milliseconds(100));
    store->add_result(test::make_row(100));  // over a second since the last commit: 64..100
    store->add_result(test::make_row(101));  // queued only: the kill loses it
    signal_ready(ready_fd);
    for (;;) ::pause();
  });
  kill_child(pid);
  // The kill left the write-ahead log behind, with commits not yet in the main file.
  EXPECT_TRUE(std::filesystem::exists(path + "-wal"));

  const auto store = JobStore::open(path);
  std::vector<int64_t> expected_indices;
  for (int64_t i = 0; i <= 100; ++i) expected_indices.push_back(i);
  EXPECT_EQ(store->finished_row_indices(), expected_indices);
  for (int64_t i = 0; i <= 100; ++i) EXPECT_EQ(store->result(i), test::make_row(i)) << "row " << i;
  EXPECT_FALSE(store->has_result(101));
  expect_sound(path);
}

TEST(JobStoreCrash, KillWhileWritingLeavesAPrefixOfRows) {
  const std::string path = test::make_temp_dir("job-crash") + "/job.sluicejob";
  const pid_t pid = start_child([&](int ready_fd) {
    const auto store = JobStore::create(path, test::make_job_info());
    for (int64_t i = 0;; ++i) {
      store->add_result(test::make_row(i));
      if (i == 199) signal_ready(ready_fd);  // 3 batches of 64 are committed by now
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // let it commit mid-stream
  kill_child(pid);

  const auto store = JobStore::open(path);
  const std::vector<int64_t> indices = store->finished_row_indices();
  ASSERT_GE(indices.size(), 192u);
  for (size_t i = 0; i < indices.size(); ++i) ASSERT_EQ(indices[i], static_cast<int64_t>(i));
  int64_t num_checked = 0;
  store->for_each_result([&](const RowResult& row) {
    EXPECT_EQ(row, test::make_row(row.row_index));
    num_checked++;
  });
  EXPECT_EQ(num_checked, static_cast<int64_t>(indices.size()));
  expect_sound(path);
}

// A run killed while it creates its job file must leave no file a resume cannot open: either no
// job file, or one with its info. A child creates jobs back to back so that the kill is almost
// sure to land inside a create.
TEST(JobStoreCrash, KillDuringCreateLeavesNoJobOrAWholeOne) {
  for (int attempt = 0; attempt < 6; ++attempt) {
    const std::string dir = test::make_temp_dir("job-crash-create");
    const auto path_of = [&](int i) { return dir + "/job-" + std::to_string(i) + ".sluicejob"; };
    const pid_t pid = start_child([&](int ready_fd) {
      signal_ready(ready_fd);
      for (int i = 0;; ++i) JobStore::create(path_of(i), test::make_job_info());
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(15 + 7 * attempt));
    kill_child(pid);
    int num_jobs = 0;
    while (std::filesystem::exists(path_of(num_jobs))) {
      SCOPED_TRACE(path_of(num_jobs));
      const auto store = JobStore::open(path_of(num_jobs));
      JobInfo expected = test::make_job_info();
      expected.created_at = store->info().created_at;
      EXPECT_EQ(store->info(), expected);
      EXPECT_TRUE(store->finished_row_indices().empty());
      ++num_jobs;
    }
    // The next create of the path the child was on cleans up what it left behind.
    JobStore::create(path_of(num_jobs), test::make_job_info());
    const std::string leftover_prefix = path_of(num_jobs) + ".creating-";
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      EXPECT_NE(entry.path().string().rfind(leftover_prefix, 0), 0u) << entry.path();
  }
}

}  // namespace
}  // namespace sluice
