// JSON Lines: one JSON object per line. Blank lines are skipped (they are not rows); CRLF line
// ends and a leading UTF-8 BOM are accepted. Lines are read whole, so a 10 MB row is fine and
// the file is never held.
#pragma once

#include <string>

#include "engine/input/dataset_reader.h"

namespace sluice {

class JsonlReader final : public DatasetReader {
 public:
  // Opens path; rows are plain objects (Jsonl) or chat records (ShareGpt, OpenAiChat).
  // max_bytes: read only the file's first bytes (format sniffing).
  JsonlReader(const std::string& path, DatasetFormat row_format,
              uint64_t max_bytes = TextInput::kUnlimitedBytes);

  std::optional<DatasetRow> next() override;
  DatasetFormat format() const override { return row_format_; }

 private:
  DatasetFormat row_format_;
  std::string line_text_;
  int64_t next_row_index_ = 0;
};

}  // namespace sluice
