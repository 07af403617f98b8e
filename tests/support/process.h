// Runs a program to completion for CLI tests, capturing its exit code, stdout and stderr.
#pragma once

#include <string>
#include <vector>

namespace sluice::test {

struct ProcessResult {
  int exit_code = -1;  // the exit status, or 128 + signal when killed
  std::string out;
  std::string err;
};

// Runs argv[0] with argv (no shell), stdin from /dev/null. Throws when it cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::vector<std::string>& extra_env = {});

// A process started in the background (stdout/stderr to files), for tests that kill it.
class BackgroundProcess {
 public:
  explicit BackgroundProcess(const std::vector<std::string>& argv);
  ~BackgroundProcess();  // kills and reaps it if still running
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  bool is_running();
  // Sends SIGKILL and waits; returns the exit code as run_process reports it.
  int kill_now();
  // Waits for it to end by itself.
  ProcessResult wait();

 private:
  int pid_ = -1;
  int status_ = 0;
  bool is_reaped_ = false;
  std::string out_path_, err_path_;
};

}  // namespace sluice::test
