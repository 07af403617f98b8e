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

}  // namespace sluice::test
