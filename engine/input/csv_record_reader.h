// RFC 4180 records: fields separated by a delimiter (',' or '\t'), records by LF or CRLF; a
// field in double quotes may hold delimiters, line breaks and doubled quotes (""). Quotes inside
// an unquoted field are kept as text, as most writers expect. A syntax problem is recorded on the
// record (the reader still consumes the whole record) so the caller can report it as a row error
// and go on with the next record.
#pragma once

#include <string>
#include <vector>

#include "engine/input/text_input.h"

namespace sluice {

struct CsvRecord {
  std::vector<std::string> values;
  std::string raw_text;         // the record's bytes as read, for UTF-8 checks with positions
  TextPosition start;           // where the record starts
  std::string error;            // the first syntax problem; empty when well-formed
  TextPosition error_position;  // where that problem is
};

class CsvRecordReader {
 public:
  // Reads records from input, which must outlive the reader.
  CsvRecordReader(TextInput& input, char delimiter) : input_(input), delimiter_(delimiter) {}

  // Reads the next record into record, skipping empty lines. Returns false at the end of the
  // file.
  bool read(CsvRecord& record);

 private:
  // Reads one field into value; returns the byte that ended it (delimiter, '\n' or -1).
  int read_field(CsvRecord& record, std::string& value);
  // Reads the rest of a field whose opening '"' (at quote_position) was consumed.
  void read_quoted(CsvRecord& record, std::string& value, TextPosition quote_position);
  // Consumes one byte, keeping it in record.raw_text.
  int take(CsvRecord& record);
  // Keeps the first problem of a record.
  void note_error(CsvRecord& record, TextPosition position, std::string message);

  TextInput& input_;
  char delimiter_;
};

}  // namespace sluice
