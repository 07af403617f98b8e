#include "tests/support/memory_limit.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <new>
#include <stdexcept>

#include "engine/core/error.h"

namespace sluice::test {

namespace {

// Returns the data segment's size (VmData) in bytes, or 0 when it cannot be read.
size_t data_segment_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmData:")) return std::stoull(line.substr(7)) * 1024;
  }
  return 0;
}

// Writes all of text to fd, ignoring failures (the parent then reports a short message).
void write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

[[noreturn]] void run_child(const std::function<void()>& attempt, size_t max_extra_bytes, int fd) {
  rlimit limit{};
  getrlimit(RLIMIT_DATA, &limit);
  limit.rlim_cur = data_segment_bytes() + max_extra_bytes;
  if (limit.rlim_cur > limit.rlim_max || setrlimit(RLIMIT_DATA, &limit) != 0) {
    write_all(fd, "cannot set RLIMIT_DATA");
    _exit(3);
  }
  int code = 2;
  std::string outcome;
  try {
    attempt();
    outcome = "returned without an error";
  } catch (const Error& e) {
    code = 0;
    outcome = e.what();
  } catch (const std::bad_alloc&) {
    outcome = "std::bad_alloc: it tried to allocate past the memory limit";
  } catch (const std::exception& e) {
    outcome = std::string("an exception other than sluice::Error: ") + e.what();
  }
  write_all(fd, outcome);
  _exit(code);  // no atexit handlers, no leak check: the parent owns the test
}

}  // namespace

LimitedRun run_with_memory_limit(const std::function<void()>& attempt, size_t max_extra_bytes) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("run_with_memory_limit: pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("run_with_memory_limit: fork failed");
  if (pid == 0) {
    close(fds[0]);
    run_child(attempt, max_extra_bytes, fds[1]);
  }
  close(fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  LimitedRun run;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    run.threw_error = true;
    run.outcome = text;
  } else if (WIFSIGNALED(status)) {
    run.outcome = std::string("killed by signal ") + strsignal(WTERMSIG(status)) +
                  " (a sanitizer's out-of-memory abort past the limit?)";
  } else {
    run.outcome = text.empty() ? "exited with " + std::to_string(WEXITSTATUS(status)) : text;
  }
  return run;
}

void expect_error_within_memory_limit(const std::function<void()>& attempt,
                                      const std::vector<std::string>& fragments,
                                      size_t max_extra_bytes) {
  const LimitedRun run = run_with_memory_limit(attempt, max_extra_bytes);
  ASSERT_TRUE(run.threw_error) << run.outcome;
  for (const auto& fragment : fragments) {
    EXPECT_NE(run.outcome.find(fragment), std::string::npos)
        << "expected \"" << fragment << "\" in: " << run.outcome;
  }
}

}  // namespace sluice::test
