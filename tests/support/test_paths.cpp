#include "tests/support/test_paths.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace sluice::test {

std::string shared_path(const std::string& relative) {
  const std::filesystem::path path = std::filesystem::path(SLUICE_SHARED_DIR) / relative;
  if (!std::filesystem::exists(path)) {
    throw std::runtime_error("shared test data is missing: " + path.string() +
                             " (the ../shared directory must sit beside the checkout)");
  }
  return path.string();
}

std::string binary_dir() {
  return SLUICE_BINARY_DIR;
}

std::string source_dir() {
  return SLUICE_SOURCE_DIR;
}

namespace {

// The directories this process made, removed when it exits (SLUICE_KEEP_TEST_DIRS=1 keeps them
// for a look after a failure).
class TempDirRegistry {
 public:
  void add(const std::filesystem::path& dir) {
    const std::lock_guard lock(mutex_);
    dirs_.push_back(dir);
  }
  ~TempDirRegistry() {
    if (::getpid() != owner_) return;  // a forked child leaves its parent's directories alone
    const char* keep = std::getenv("SLUICE_KEEP_TEST_DIRS");
    if (keep != nullptr && std::string(keep) == "1") return;
    for (const auto& dir : dirs_) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }

 private:
  const pid_t owner_ = ::getpid();
  std::mutex mutex_;
  std::vector<std::filesystem::path> dirs_;
};

TempDirRegistry& temp_dirs() {
  static TempDirRegistry registry;
  return registry;
}

}  // namespace

std::string make_temp_dir(const std::string& name) {
  static std::atomic<int> counter{0};
  TempDirRegistry& registry = temp_dirs();
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("sluice-test-" + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  registry.add(dir);
  return dir.string();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << content;
  if (!out) throw std::runtime_error("write failed: " + path);
}

}  // namespace sluice::test
