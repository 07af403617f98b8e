#include "engine/input/jsonl_reader.h"

#include "engine/input/json_row.h"

namespace sluice {

JsonlReader::JsonlReader(const std::string& path, DatasetFormat row_format, uint64_t max_bytes)
    : DatasetReader(path, max_bytes), row_format_(row_format) {
  input().skip_bom();
}

std::optional<DatasetRow> JsonlReader::next() {
  while (true) {
    const TextPosition start = input().position();
    if (!input().read_line(line_text_)) return std::nullopt;
    if (line_text_.find_first_not_of(" \t\r") == std::string::npos) continue;
    JsonRowPlace place;
    place.path = &path();
    place.row_index = next_row_index_++;
    place.row_line = start.line;
    place.text_start = start;
    return parse_json_row(line_text_, row_format_, place);
  }
}

}  // namespace sluice
