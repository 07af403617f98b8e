// Plain text: one prompt per line, as the row's field "text". Blank (whitespace-only) lines are
// skipped; CRLF line ends and a leading UTF-8 BOM are accepted.
#pragma once

#include <string>

#include "engine/input/dataset_reader.h"

namespace sluice {

class TextReader final : public DatasetReader {
 public:
  // Opens path. Throws Error when it cannot be opened.
  explicit TextReader(const std::string& path);

  std::optional<DatasetRow> next() override;
  DatasetFormat format() const override { return DatasetFormat::Text; }

 private:
  std::string line_text_;
  int64_t next_row_index_ = 0;
};

}  // namespace sluice
