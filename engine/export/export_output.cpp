#include "engine/export/export_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "engine/core/error.h"
#include "engine/jobs/abandoned_files.h"

namespace sluice {
namespace {

// Large writes keep the export I/O-bound on the disk, not on system calls.
constexpr size_t kWriteBufferBytes = size_t{1} << 20;

constexpr const char* kPartialInfix = ".partial-";

// The temporary file beside path that an export writes and renames.
std::string temp_path_for(const std::string& path) {
  return path + kPartialInfix + std::to_string(::getpid());
}

}  // namespace

void ExportOutput::check_destination(const std::string& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (std::filesystem::is_directory(status))
    fail(path, ": is a directory; the output must name a file");
  // The finished export is renamed over path: that must not replace a device or a pipe.
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    fail(path, ": is not a regular file; the output must name a file");
  // Creating the very file the export will write asks the OS every question at once: does the
  // directory exist, is it a directory, may we write there, is the file system read-only.
  const std::string temp_path = temp_path_for(path);
  const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    fail(path, ": cannot write the output there: ", std::strerror(errno), " (in directory ",
         parent.empty() ? std::string(".") : parent.string(), ")");
  }
  ::close(fd);
  ::unlink(temp_path.c_str());
}

ExportOutput::ExportOutput(std::string path)
    : path_(std::move(path)), temp_path_(temp_path_for(path_)) {
  // An export killed part-way (kill -9, a crash) never reached its destructor: its partial file
  // goes now. Those of running processes stay: two exports to one place may run at once.
  remove_abandoned_files(path_, kPartialInfix);
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
