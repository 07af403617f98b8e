// A bounds-checked little-endian cursor over a byte range, for parsing binary headers. Every
// read that would pass the end throws Error naming the file, the field and the offset.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "engine/core/error.h"

namespace sluice {

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size, std::string path)
      : data_(data), size_(size), path_(std::move(path)) {}

  size_t offset() const { return offset_; }
  size_t remaining() const { return size_ - offset_; }
  const std::string& path() const { return path_; }

  // Reads a trivially copyable little-endian value; `what` names the field for errors.
  template <typename T>
  T read(std::string_view what) {
    static_assert(std::is_trivially_copyable_v<T>);
    require(sizeof(T), what);
    T value;
    std::memcpy(&value, data_ + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }

  // Reads num_bytes raw bytes as a string.
  std::string read_bytes(size_t num_bytes, std::string_view what) {
    require(num_bytes, what);
    std::string out(reinterpret_cast<const char*>(data_ + offset_), num_bytes);
    offset_ += num_bytes;
    return out;
  }

  void skip(size_t num_bytes, std::string_view what) {
    require(num_bytes, what);
    offset_ += num_bytes;
  }

  // Throws unless num_bytes more bytes are available.
  void require(size_t num_bytes, std::string_view what) const {
    if (num_bytes > size_ - offset_) {
      fail(path_, ": truncated while reading ", what, " at offset ", offset_, " (need ", num_bytes,
           " bytes, ", size_ - offset_, " left of ", size_, ")");
    }
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
  std::string path_;
};

}  // namespace sluice
