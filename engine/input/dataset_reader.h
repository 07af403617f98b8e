// Streaming readers of instruction files. A reader hands over one DatasetRow at a time and holds
// only that row (and a small buffer), so a 2 GB file is read in constant memory. A bad row is
// reported and skipped without losing its place: row indices count bad rows too, so a row keeps
// its index in every run over the same file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/core/error.h"
#include "engine/input/dataset_format.h"
#include "engine/input/dataset_row.h"
#include "engine/input/text_input.h"

namespace sluice {

// One malformed row. The reader has moved past it: the caller may log it and call next() again.
// The message names the file and line (and the JSON element or column where it helps).
class DatasetRowError : public Error {
 public:
  DatasetRowError(const std::string& message, size_t line_in, int64_t row_index_in)
      : Error(message), line(line_in), row_index(row_index_in) {}

  size_t line = 0;  // as DatasetRow::line: 1-based line, or element index + 1 in a JSON array
  int64_t row_index = -1;  // the index the row would have had
};

class DatasetReader {
 public:
  virtual ~DatasetReader();

  // Returns the next row, or nullopt at the end of the file. Throws DatasetRowError for a
  // malformed row (the reader stays positioned after it) and plain Error for a problem that
  // ends reading (unreadable file, broken JSON array structure); such an error repeats on
  // every later call.
  virtual std::optional<DatasetRow> next() = 0;

  // Returns the concrete format being read (never Auto).
  virtual DatasetFormat format() const = 0;

  // Returns the path the reader was opened on.
  const std::string& path() const { return input_.path(); }

  // Returns the fraction of the file's bytes consumed so far, in [0, 1], for progress bars.
  double progress() const { return input_.progress(); }

 protected:
  // Opens path (only its first max_bytes bytes, for sniffing); throws Error when it cannot be
  // opened.
  explicit DatasetReader(const std::string& path, uint64_t max_bytes = TextInput::kUnlimitedBytes)
      : input_(path, max_bytes) {}

  TextInput& input() { return input_; }

 private:
  TextInput input_;
};

// Opens path as a reader of format (Auto: detect_dataset_format). Throws Error when the file
// cannot be opened or is empty (nothing but whitespace).
std::unique_ptr<DatasetReader> open_dataset(const std::string& path,
                                            DatasetFormat format = DatasetFormat::Auto);

}  // namespace sluice
