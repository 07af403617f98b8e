// The file an export writes: a temporary file beside the destination ("<path>.partial-<pid>")
// that commit() syncs and renames over the destination, so readers only ever see a complete
// export. Without commit() (an error part-way) the temporary file is removed; one left by a
// killed export is removed by the next export to the same path.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace sluice {

class ExportOutput {
 public:
  // Checks, before a long run, that an export can be written at path: it is missing or a regular
  // file, and a file can be created beside it (one is, and removed). Throws Error naming path and
  // the OS reason (a missing or read-only directory, ...).
  static void check_destination(const std::string& path);

  // Opens the temporary file for path, first removing the temporary files of earlier exports to
  // path whose processes are gone (killed part-way). Throws Error naming it when it cannot be
  // created.
  explicit ExportOutput(std::string path);
  // Removes the temporary file unless commit() succeeded.
  ~ExportOutput();
  ExportOutput(const ExportOutput&) = delete;
  ExportOutput& operator=(const ExportOutput&) = delete;

  // Appends bytes. Throws Error naming the file on a write error (e.g. disk full).
  void write(std::string_view text);
  // Flushes, syncs and closes the temporary file, then renames it to the destination.
  void commit();

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string temp_path_;
  std::FILE* file_ = nullptr;
  bool is_committed_ = false;
};

}  // namespace sluice
