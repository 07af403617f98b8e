#include "engine/input/text_reader.h"

#include "engine/input/utf8_validation.h"

namespace sluice {

TextReader::TextReader(const std::string& path) : DatasetReader(path) {
  input().skip_bom();
}

std::optional<DatasetRow> TextReader::next() {
  while (true) {
    const TextPosition start = input().position();
    if (!input().read_line(line_text_)) return std::nullopt;
    if (line_text_.find_first_not_of(" \t\r") == std::string::npos) continue;
    const int64_t row_index = next_row_index_++;
    if (const auto bad = find_invalid_utf8(line_text_)) {
      throw DatasetRowError(str_cat(path(), ":", start.line, ":", start.column + *bad, ": ",
                                    describe_invalid_utf8(line_text_, *bad)),
                            start.line, row_index);
    }
    DatasetRow row;
    row.row_index = row_index;
    row.line = start.line;
    row.fields = nlohmann::ordered_json::object();
    row.fields["text"] = line_text_;
    return row;
  }
}

}  // namespace sluice
