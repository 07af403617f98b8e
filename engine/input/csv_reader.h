// CSV and TSV files with a header row: each record becomes a row whose fields map the header's
// names to the record's values (always strings). A record with a different number of values
// than the header is a row error naming its line; a bad header ends reading at once, since no
// row can be read without it.
#pragma once

#include <string>
#include <vector>

#include "engine/input/csv_record_reader.h"
#include "engine/input/dataset_reader.h"

namespace sluice {

class CsvReader final : public DatasetReader {
 public:
  // Opens path and reads its header (format: Csv or Tsv). Throws Error when the file cannot be
  // read or the header is malformed, has invalid UTF-8 or repeats a name.
  CsvReader(const std::string& path, DatasetFormat format);

  std::optional<DatasetRow> next() override;
  DatasetFormat format() const override { return format_; }

  // Returns the column names (empty header cells are named "column_<n>", 1-based).
  const std::vector<std::string>& column_names() const { return column_names_; }

 private:
  void read_header();

  DatasetFormat format_;
  CsvRecordReader records_;
  CsvRecord record_;
  std::vector<std::string> column_names_;
  int64_t next_row_index_ = 0;
};

}  // namespace sluice
