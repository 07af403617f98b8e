#include "tests/fuzz/fuzz_input_file.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace sluice::fuzz {
namespace {

namespace fs = std::filesystem;

class InputDirectory {
 public:
  InputDirectory()
      : path_(fs::temp_directory_path() / ("sluice-fuzz-" + std::to_string(::getpid()))) {
    fs::create_directories(path_);
  }
  ~InputDirectory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  InputDirectory(const InputDirectory&) = delete;
  InputDirectory& operator=(const InputDirectory&) = delete;

  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

std::string write_input_file(const std::string& name, const uint8_t* data, size_t size) {
  static const InputDirectory directory;
  const std::string path = (directory.path() / name).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

}  // namespace sluice::fuzz
