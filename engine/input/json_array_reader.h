// A JSON array of objects, streamed one element at a time: a small scanner finds where each
// element ends (tracking strings, escapes and bracket nesting) and only that element's text is
// parsed, so a 2 GB array costs one element of memory. A malformed element is a row error when
// the array's structure around it is intact; a broken structure (truncated file, mismatched
// brackets, a missing comma) ends reading with an Error naming the line and column.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/input/dataset_reader.h"

namespace sluice {

class JsonArrayReader final : public DatasetReader {
 public:
  // Opens path; elements are plain objects (Json) or chat records (ShareGpt, OpenAiChat).
  // max_bytes: read only the file's first bytes (format sniffing).
  JsonArrayReader(const std::string& path, DatasetFormat row_format,
                  uint64_t max_bytes = TextInput::kUnlimitedBytes);

  std::optional<DatasetRow> next() override;
  DatasetFormat format() const override { return row_format_; }

 private:
  // Moves to the start of the next element; returns false at the closing ']'.
  bool seek_element();
  // Reads one element's text into element_text_, stopping right after it.
  void capture_element(TextPosition start);
  // Checks that nothing but whitespace follows the closing ']'.
  void finish();
  // Records a fatal problem (repeated by every later next()) and throws it.
  [[noreturn]] void fail_fatal(TextPosition position, const std::string& message);

  DatasetFormat row_format_;
  std::string element_text_;
  std::vector<char> open_brackets_;  // the nesting inside the current element
  int64_t next_row_index_ = 0;
  bool has_started_ = false;  // the opening '[' was consumed
  bool is_finished_ = false;  // the closing ']' was consumed
  std::optional<std::string> fatal_error_;
};

}  // namespace sluice
