// One row of a JSON-based file (a JSONL line or a JSON array element) from its raw text to a
// DatasetRow: UTF-8 check, parse, object check, and for chat formats the conversation. Shared by
// the JSONL and JSON array readers so that both report the same problems the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/input/dataset_format.h"
#include "engine/input/dataset_row.h"
#include "engine/input/text_input.h"

namespace sluice {

// Where a row's text sits, for DatasetRow and for error messages.
struct JsonRowPlace {
  const std::string* path = nullptr;
  int64_t row_index = 0;
  size_t row_line = 0;      // DatasetRow::line
  TextPosition text_start;  // the file position of the text's first byte
  bool is_array_element = false;
};

// Parses text as one row of format (Jsonl/Json: any object; ShareGpt/OpenAiChat: an object with
// a valid conversation). Throws DatasetRowError, naming the file, line and column, for invalid
// UTF-8, malformed JSON (nesting past kMaxJsonDepth and numbers out of a double's range
// included), a value that is not an object, or a bad conversation.
DatasetRow parse_json_row(std::string_view text, DatasetFormat format, const JsonRowPlace& place);

// Returns "path:line:column: element N: " (element only for array elements) as an error prefix.
std::string json_row_prefix(const JsonRowPlace& place, TextPosition position);

}  // namespace sluice
