#include "engine/input/text_input.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "engine/core/error.h"

namespace sluice {

namespace {

constexpr size_t kBufferBytes = 64 * 1024;

}  // namespace

TextPosition position_in(std::string_view text, size_t offset, TextPosition start) {
  TextPosition position = start;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++position.line;
      position.column = 1;
    } else {
      ++position.column;
    }
  }
  return position;
}

TextInput::TextInput(const std::string& path, uint64_t max_bytes)
    : path_(path), in_(path, std::ios::binary), buffer_(kBufferBytes), max_bytes_(max_bytes) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) fail(path, ": is a directory, not a file");
  if (!in_) fail(path, ": cannot open for reading");
  const auto size = std::filesystem::file_size(path, error);
  // Pipes and special files have no size; progress then stays at 0 until the end.
  size_bytes_ = error ? 0 : std::min<uint64_t>(size, max_bytes);
}

bool TextInput::fill() {
  const uint64_t num_allowed = max_bytes_ - offset_;  // offset_ never passes max_bytes_
  if (at_end_ || !in_ || num_allowed == 0) {
    at_end_ = true;
    return false;
  }
  const auto num_wanted = static_cast<size_t>(std::min<uint64_t>(buffer_.size(), num_allowed));
  in_.read(buffer_.data(), static_cast<std::streamsize>(num_wanted));
  if (in_.bad()) fail(path_, ": read error at byte ", offset_);
  pos_ = 0;
  end_ = static_cast<size_t>(in_.gcount());
  at_end_ = end_ == 0;
  return !at_end_;
}

bool TextInput::read_line(std::string& line) {
  line.clear();
  if (peek() < 0) return false;
  while (peek() >= 0) {
    // memchr over the buffer keeps a 10 MB line a handful of appends, not 10 M calls of get().
    const char* start = buffer_.data() + pos_;
    const auto* newline = static_cast<const char*>(std::memchr(start, '\n', end_ - pos_));
    const size_t num_bytes = newline ? static_cast<size_t>(newline - start) : end_ - pos_;
    line.append(start, num_bytes);
    pos_ += num_bytes;
    offset_ += num_bytes;
    if (newline) {
      get();  // the '\n' itself, which advances the line count
      break;
    }
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

void TextInput::skip_bom() {
  if (peek() != 0xEF || end_ - pos_ < 3) return;
  if (static_cast<unsigned char>(buffer_[pos_ + 1]) == 0xBB &&
      static_cast<unsigned char>(buffer_[pos_ + 2]) == 0xBF) {
    pos_ += 3;
    offset_ += 3;
    line_start_offset_ = offset_;  // columns count from after the BOM
  }
}

void TextInput::skip_whitespace() {
  while (is_blank_byte(peek())) get();
}

double TextInput::progress() const {
  if (at_end_ && pos_ == end_) return 1.0;
  if (size_bytes_ == 0) return 0.0;
  const double fraction = static_cast<double>(offset_) / static_cast<double>(size_bytes_);
  return fraction < 1.0 ? fraction : 1.0;
}

int first_content_byte(const std::string& path) {
  TextInput input(path);
  input.skip_bom();
  input.skip_whitespace();
  return input.peek();
}

}  // namespace sluice
