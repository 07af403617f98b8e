#include "engine/jobs/abandoned_files.h"

#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace sluice {

bool is_process_running(long pid) {
  // EPERM: it exists, under another user.
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

int remove_abandoned_files(const std::string& path, const std::string& infix) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const std::string prefix = target.filename().string() + infix;
  const fs::path directory = target.has_parent_path() ? target.parent_path() : fs::path(".");
  int num_removed = 0;
  std::error_code error;
  for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    char* digits_end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &digits_end, 10);
    if (pid <= 0 || *digits_end != '\0' || is_process_running(pid)) continue;
    std::error_code ignored;
    if (fs::remove(it->path(), ignored)) ++num_removed;
  }
  return num_removed;
}

}  // namespace sluice
