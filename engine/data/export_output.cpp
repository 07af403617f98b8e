#include "engine/data/export_output.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "engine/core/error.h"

namespace sluice {
namespace {

// Large writes keep the export I/O-bound on the disk, not on system calls.
constexpr size_t kWriteBufferBytes = size_t{1} << 20;

}  // namespace

ExportOutput::ExportOutput(std::string path)
    : path_(std::move(path)), temp_path_(path_ + ".partial-" + std::to_string(::getpid())) {
  file_ = std::fopen(temp_path_.c_str(), "wb");
  if (file_ == nullptr) fail(temp_path_, ": cannot create the export file: ", std::strerror(errno));
  std::setvbuf(file_, nullptr, _IOFBF, kWriteBufferBytes);
}

ExportOutput::~ExportOutput() {
  if (file_ != nullptr) std::fclose(file_);
  if (!is_committed_) {
    std::error_code ignored;
    std::filesystem::remove(temp_path_, ignored);
  }
}

void ExportOutput::write(std::string_view text) {
  if (text.empty()) return;
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size())
    fail(temp_path_, ": write failed: ", std::strerror(errno));
}

void ExportOutput::commit() {
  // Sync before the rename: otherwise an OS crash could leave the new name on empty content.
  if (std::fflush(file_) != 0) fail(temp_path_, ": write failed: ", std::strerror(errno));
  if (::fsync(::fileno(file_)) != 0) fail(temp_path_, ": sync failed: ", std::strerror(errno));
  const int close_result = std::fclose(file_);
  file_ = nullptr;
  if (close_result != 0) fail(temp_path_, ": close failed: ", std::strerror(errno));
  std::error_code error;
  std::filesystem::rename(temp_path_, path_, error);
  if (error) fail(path_, ": cannot move the finished export into place: ", error.message());
  is_committed_ = true;
}

}  // namespace sluice
