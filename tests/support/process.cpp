#include "tests/support/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>

#include "tests/support/test_paths.h"

extern char** environ;

namespace sluice::test {

namespace {

int spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env, const std::string& out_path,
          const std::string& err_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_storage;
  for (char** e = environ; *e; ++e) env_storage.emplace_back(*e);
  for (const auto& e : extra_env) env_storage.push_back(e);
  std::vector<char*> env;
  for (auto& e : env_storage) env.push_back(e.data());
  env.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  return pid;
}

int exit_code_of(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv) {
  const std::string dir = make_temp_dir("background");
  out_path_ = dir + "/stdout";
  err_path_ = dir + "/stderr";
  pid_ = spawn(argv, {"QT_QPA_PLATFORM=offscreen"}, out_path_, err_path_);
}

BackgroundProcess::~BackgroundProcess() {
  if (!is_reaped_) kill_now();
}

bool BackgroundProcess::is_running() {
  if (is_reaped_) return false;
  const pid_t r = waitpid(pid_, &status_, WNOHANG);
  if (r == pid_) is_reaped_ = true;
  return !is_reaped_;
}

int BackgroundProcess::kill_now() {
  if (!is_reaped_) {
    ::kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
    is_reaped_ = true;
  }
  return exit_code_of(status_);
}

ProcessResult BackgroundProcess::wait() {
  if (!is_reaped_) {
    waitpid(pid_, &status_, 0);
    is_reaped_ = true;
  }
  return ProcessResult{exit_code_of(status_), read_file(out_path_), read_file(err_path_)};
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env) {
  const std::string dir = make_temp_dir("process");
  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  const int pid = spawn(argv, extra_env, out_path, err_path);
  int status = 0;
  waitpid(pid, &status, 0);
  return ProcessResult{exit_code_of(status), read_file(out_path), read_file(err_path)};
}

}  // namespace sluice::test
