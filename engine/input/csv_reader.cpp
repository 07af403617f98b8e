#include "engine/input/csv_reader.h"

#include <algorithm>

#include "engine/input/utf8_validation.h"

namespace sluice {

namespace {

std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return {};
  const size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

}  // namespace

CsvReader::CsvReader(const std::string& path, DatasetFormat format)
    : DatasetReader(path),
      format_(format),
      records_(input(), format == DatasetFormat::Tsv ? '\t' : ',') {
  input().skip_bom();
  read_header();
}

void CsvReader::read_header() {
  if (!records_.read(record_)) return;  // an empty file has no rows (open_dataset rejects it)
  const TextPosition start = record_.start;
  if (!record_.error.empty()) {
    fail(path(), ":", record_.error_position.line, ":", record_.error_position.column,
         ": header row: ", record_.error);
  }
  if (const auto bad = find_invalid_utf8(record_.raw_text)) {
    const TextPosition position = position_in(record_.raw_text, *bad, start);
    fail(path(), ":", position.line, ":", position.column,
         ": header row: ", describe_invalid_utf8(record_.raw_text, *bad));
  }
  for (size_t i = 0; i < record_.values.size(); ++i) {
    std::string name = trimmed(record_.values[i]);
    // pandas writes its index column with an empty header cell.
    if (name.empty()) name = str_cat("column_", i + 1);
    if (std::find(column_names_.begin(), column_names_.end(), name) != column_names_.end()) {
      fail(path(), ":", start.line, ": header row: column ", i + 1, " repeats the name \"", name,
           "\"");
    }
    column_names_.push_back(std::move(name));
  }
}

std::optional<DatasetRow> CsvReader::next() {
  if (!records_.read(record_)) return std::nullopt;
  const TextPosition start = record_.start;
  const int64_t row_index = next_row_index_++;
  const auto row_error = [&](TextPosition position, const std::string& message) {
    return DatasetRowError(str_cat(path(), ":", position.line, ":", position.column, ": ", message),
                           start.line, row_index);
  };
  if (!record_.error.empty()) throw row_error(record_.error_position, record_.error);
  if (const auto bad = find_invalid_utf8(record_.raw_text)) {
    throw row_error(position_in(record_.raw_text, *bad, start),
                    describe_invalid_utf8(record_.raw_text, *bad));
  }
  if (record_.values.size() != column_names_.size()) {
    throw row_error(start, str_cat("expected ", column_names_.size(),
                                   " columns (as in the header), found ", record_.values.size()));
  }
  DatasetRow row;
  row.row_index = row_index;
  row.line = start.line;
  row.fields = nlohmann::ordered_json::object();
  for (size_t i = 0; i < column_names_.size(); ++i) {
    row.fields[column_names_[i]] = std::move(record_.values[i]);
  }
  return row;
}

}  // namespace sluice
