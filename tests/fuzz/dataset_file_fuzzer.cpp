// Feeds instruction files to the dataset readers: format detection by content and extension,
// then every reader (JSONL, JSON array, CSV, TSV, text, ShareGPT, OpenAI messages) to the end.
// The input's last byte picks the file's extension and the format forced in a second read, so
// one corpus reaches every reader. Checked on the way: rows carry consecutive indices (bad rows
// included), rows are JSON objects, a file of n bytes has at most n + 1 rows, errors name the
// file, and an error that ends reading repeats on the next call.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "engine/core/error.h"
#include "engine/input/dataset_reader.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_input_file.h"

using namespace sluice;

namespace {

constexpr const char* kFileNames[] = {"rows.jsonl", "rows.json", "rows.csv",
                                      "rows.tsv",   "rows.txt",  "rows"};
constexpr DatasetFormat kForcedFormats[] = {
    DatasetFormat::Jsonl, DatasetFormat::Json,     DatasetFormat::Csv,        DatasetFormat::Tsv,
    DatasetFormat::Text,  DatasetFormat::ShareGpt, DatasetFormat::OpenAiChat,
};

void read_all(const std::string& path, DatasetFormat format, size_t size) {
  std::unique_ptr<DatasetReader> reader;
  try {
    reader = open_dataset(path, format);
  } catch (const Error& error) {
    fuzz::require_names_file(error, path);
    return;
  }
  fuzz::fuzz_require(reader->format() != DatasetFormat::Auto, "a reader reports format auto");
  int64_t next_index = 0;
  while (true) {
    fuzz::fuzz_require(static_cast<uint64_t>(next_index) <= size + 1,
                       str_cat("more than ", size + 1, " rows from ", size, " bytes"));
    try {
      const std::optional<DatasetRow> row = reader->next();
      if (!row) break;
      fuzz::fuzz_require(row->row_index == next_index,
                         str_cat("row index ", row->row_index, ", expected ", next_index));
      fuzz::fuzz_require(row->line >= 1, "row line 0");
      fuzz::fuzz_require(row->fields.is_object(), "row fields are not a JSON object");
    } catch (const DatasetRowError& error) {
      fuzz::require_names_file(error, path);
      fuzz::fuzz_require(error.row_index == next_index,
                         str_cat("bad row index ", error.row_index, ", expected ", next_index));
    } catch (const Error& error) {
      fuzz::require_names_file(error, path);
      try {
        (void)reader->next();
        fuzz::fuzz_fail(str_cat("reading went on after the error: ", error.what()));
      } catch (const DatasetRowError&) {
        fuzz::fuzz_fail(str_cat("a row came after the error: ", error.what()));
      } catch (const Error&) {
      }
      return;
    }
    const double progress = reader->progress();
    fuzz::fuzz_require(progress >= 0.0 && progress <= 1.0, str_cat("progress ", progress));
    ++next_index;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t choice = size > 0 ? data[size - 1] : 0;
  const std::string path =
      fuzz::write_input_file(kFileNames[choice % std::size(kFileNames)], data, size);
  read_all(path, DatasetFormat::Auto, size);
  read_all(path, kForcedFormats[choice / std::size(kFileNames) % std::size(kForcedFormats)], size);
  return 0;
}
