// Sequential, buffered reading of a dataset file that never holds more than one buffer of it
// (plus whatever line or record the caller is assembling), so a 2 GB file costs 64 KiB. It
// counts lines and columns as bytes are consumed so that every reader can name where a problem
// is, and the bytes consumed give the readers' progress.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// A 1-based line and byte column in a file.
struct TextPosition {
  size_t line = 1;
  size_t column = 1;
};

// Returns the position of text[offset], given that text[0] sits at start.
TextPosition position_in(std::string_view text, size_t offset, TextPosition start);

class TextInput {
 public:
  static constexpr uint64_t kUnlimitedBytes = ~uint64_t{0};

  // Opens path for reading; with max_bytes, the file seems to end after its first max_bytes
  // bytes (format sniffing looks at a bounded prefix). Throws Error naming the path when it
  // cannot be opened.
  explicit TextInput(const std::string& path, uint64_t max_bytes = kUnlimitedBytes);

  TextInput(const TextInput&) = delete;
  TextInput& operator=(const TextInput&) = delete;

  // Returns the next byte (0..255) without consuming it, or -1 at the end of the file.
  int peek() {
    if (pos_ == end_ && !fill()) return -1;
    return static_cast<unsigned char>(buffer_[pos_]);
  }

  // Consumes and returns the next byte (0..255), or -1 at the end of the file.
  int get() {
    if (pos_ == end_ && !fill()) return -1;
    const auto byte = static_cast<unsigned char>(buffer_[pos_++]);
    ++offset_;
    if (byte == '\n') {
      ++line_;
      line_start_offset_ = offset_;
    }
    return byte;
  }

  // Reads the rest of the current line into line (without its '\n'; a '\r' before it is
  // removed too). Returns false, leaving line empty, when nothing is left to read.
  bool read_line(std::string& line);

  // Consumes a UTF-8 byte order mark when the file starts with one. Precondition: nothing has
  // been read yet.
  void skip_bom();

  // Consumes spaces, tabs, CRs and newlines.
  void skip_whitespace();

  // Returns the 1-based line of the next byte.
  size_t line() const { return line_; }
  // Returns the 1-based byte column of the next byte within its line.
  size_t column() const { return static_cast<size_t>(offset_ - line_start_offset_) + 1; }
  // Returns the line and column of the next byte.
  TextPosition position() const { return {line(), column()}; }
  // Returns the number of bytes consumed so far.
  uint64_t offset() const { return offset_; }
  // Returns the file's size in bytes when it was opened (at most max_bytes).
  uint64_t size_bytes() const { return size_bytes_; }
  // Returns the fraction of the file consumed, in [0, 1] (1 for an empty file).
  double progress() const;
  const std::string& path() const { return path_; }

 private:
  // Refills the buffer; returns false at the end of the file. Throws Error on a read error.
  bool fill();

  std::string path_;
  std::ifstream in_;
  std::vector<char> buffer_;
  uint64_t max_bytes_ = kUnlimitedBytes;
  size_t pos_ = 0;
  size_t end_ = 0;
  uint64_t size_bytes_ = 0;  // the file's size, or max_bytes when that is smaller
  uint64_t offset_ = 0;
  uint64_t line_start_offset_ = 0;
  size_t line_ = 1;
  bool at_end_ = false;  // the last fill() found nothing more to read
};

// Returns true for the bytes JSON and our line formats treat as blank: space, tab, CR, LF.
inline bool is_blank_byte(int byte) {
  return byte == ' ' || byte == '\t' || byte == '\r' || byte == '\n';
}

// Returns the first byte of the file at path after a UTF-8 BOM and whitespace, or -1 when there
// is nothing else (an empty file). Throws Error when the file cannot be opened.
int first_content_byte(const std::string& path);

}  // namespace sluice
