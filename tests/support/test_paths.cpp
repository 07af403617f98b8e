#include "tests/support/test_paths.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

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

std::string make_temp_dir(const std::string& name) {
  static std::atomic<int> counter{0};
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("sluice-test-" + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
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
