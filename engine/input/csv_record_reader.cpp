#include "engine/input/csv_record_reader.h"

#include <utility>

#include "engine/core/error.h"

namespace sluice {

int CsvRecordReader::take(CsvRecord& record) {
  const int byte = input_.get();
  if (byte >= 0) record.raw_text.push_back(static_cast<char>(byte));
  return byte;
}

void CsvRecordReader::note_error(CsvRecord& record, TextPosition position, std::string message) {
  if (!record.error.empty()) return;
  record.error = std::move(message);
  record.error_position = position;
}

bool CsvRecordReader::read(CsvRecord& record) {
  // Empty lines (LF or CRLF alone) are not records; a lone trailing newline is the usual case.
  while (input_.peek() == '\n' || input_.peek() == '\r') input_.get();
  if (input_.peek() < 0) return false;
  record.values.clear();
  record.raw_text.clear();
  record.error.clear();
  record.start = input_.position();
  while (true) {
    std::string value;
    const int terminator = read_field(record, value);
    record.values.push_back(std::move(value));
    if (terminator != delimiter_) return true;
  }
}

int CsvRecordReader::read_field(CsvRecord& record, std::string& value) {
  if (input_.peek() == '"') {
    const TextPosition quote_position = input_.position();
    take(record);
    read_quoted(record, value, quote_position);
  }
  while (true) {
    const int byte = input_.peek();
    if (byte < 0) return byte;
    take(record);
    if (byte == delimiter_ || byte == '\n') return byte;
    if (byte == '\r' && input_.peek() == '\n') continue;  // CRLF: the '\n' ends the record next
    value.push_back(static_cast<char>(byte));
  }
}

void CsvRecordReader::read_quoted(CsvRecord& record, std::string& value,
                                  TextPosition quote_position) {
  while (true) {
    const int byte = take(record);
    if (byte < 0) {
      note_error(record, quote_position,
                 "unterminated quoted field (it runs to the end of the file)");
      return;
    }
    if (byte != '"') {
      value.push_back(static_cast<char>(byte));
      continue;
    }
    if (input_.peek() == '"') {
      take(record);
      value.push_back('"');
      continue;
    }
    const int after = input_.peek();
    if (after >= 0 && after != delimiter_ && after != '\n' && after != '\r') {
      note_error(record, input_.position(),
                 "unexpected text after a closing quote (a quote inside a quoted field must be "
                 "doubled)");
    }
    return;
  }
}

}  // namespace sluice
