// A read-only memory map of a whole file. Model weights are used in place from the map, so a
// multi-gigabyte model costs no copy and pages in on demand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace sluice {

class MappedFile {
 public:
  // Maps the file read-only. Throws Error naming the path when it cannot be opened or mapped.
  // An empty file maps to size() == 0 and data() == nullptr.
  static std::shared_ptr<const MappedFile> open(const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Asks the kernel to read [offset, offset + num_bytes) ahead of use (no-op when unsupported).
  void prefetch(size_t offset, size_t num_bytes) const;

 private:
  MappedFile(std::string path, const uint8_t* data, size_t size);

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Reads a whole (small) text file; throws Error naming the path.
std::string read_text_file(const std::string& path);

}  // namespace sluice
