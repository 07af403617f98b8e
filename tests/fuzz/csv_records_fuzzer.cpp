// Feeds bytes to the RFC 4180 record reader with both delimiters (',' and tab). Checked: a file
// of n bytes has at most n + 1 records, every record has a value, a problem's position lies in
// the file, and records read without a problem survive a round trip: written back with every
// value quoted, they read back the same.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/input/csv_record_reader.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_input_file.h"

using namespace sluice;

namespace {

using Values = std::vector<std::string>;

// Returns the well-formed records of the file (records with a problem are checked and left out).
std::vector<Values> read_records(const std::string& path, char delimiter, size_t size) {
  TextInput input(path);
  CsvRecordReader reader(input, delimiter);
  CsvRecord record;
  std::vector<Values> good;
  size_t num_records = 0;
  while (reader.read(record)) {
    ++num_records;
    fuzz::fuzz_require(num_records <= size + 1,
                       str_cat("more than ", size + 1, " records from ", size, " bytes"));
    fuzz::fuzz_require(!record.values.empty(), "a record without values");
    if (record.error.empty()) {
      good.push_back(record.values);
    } else {
      fuzz::fuzz_require(
          record.error_position.line >= record.start.line &&
              record.error_position.line <= input.line(),
          str_cat("problem at line ", record.error_position.line, " outside its record (lines ",
                  record.start.line, " to ", input.line(), ")"));
    }
  }
  return good;
}

std::string quoted_csv(const std::vector<Values>& records, char delimiter) {
  std::string out;
  for (const Values& values : records) {
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) out.push_back(delimiter);
      out.push_back('"');
      for (const char c : values[i]) {
        if (c == '"') out.push_back('"');
        out.push_back(c);
      }
      out.push_back('"');
    }
    out.push_back('\n');
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_input_file("records.csv", data, size);
  for (const char delimiter : {',', '\t'}) {
    const std::vector<Values> records = read_records(path, delimiter, size);
    const std::string written = quoted_csv(records, delimiter);
    const std::string written_path = fuzz::write_input_file(
        "written.csv", reinterpret_cast<const uint8_t*>(written.data()), written.size());
    fuzz::fuzz_require(read_records(written_path, delimiter, written.size()) == records,
                       "records written back with quotes read differently");
  }
  return 0;
}
