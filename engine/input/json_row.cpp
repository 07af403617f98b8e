#include "engine/input/json_row.h"

#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/input/chat_conversation.h"
#include "engine/input/dataset_reader.h"
#include "engine/input/utf8_validation.h"

namespace sluice {

namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void throw_row_error(const JsonRowPlace& place, TextPosition position,
                                  const std::string& message) {
  throw DatasetRowError(json_row_prefix(place, position) + message, place.row_line,
                        place.row_index);
}

}  // namespace

std::string json_row_prefix(const JsonRowPlace& place, TextPosition position) {
  std::string prefix = str_cat(*place.path, ":", position.line, ":", position.column, ": ");
  if (place.is_array_element) prefix += str_cat("element ", place.row_index + 1, ": ");
  return prefix;
}

DatasetRow parse_json_row(std::string_view text, DatasetFormat format, const JsonRowPlace& place) {
  if (const auto bad = find_invalid_utf8(text)) {
    throw_row_error(place, position_in(text, *bad, place.text_start),
                    describe_invalid_utf8(text, *bad));
  }
  DatasetRow row;
  row.row_index = place.row_index;
  row.line = place.row_line;
  if (const auto failure = try_parse_json(text, row.fields)) {
    throw_row_error(place, position_in(text, failure->offset, place.text_start),
                    "malformed JSON: " + failure->description);
  }
  if (!row.fields.is_object()) {
    throw_row_error(place, place.text_start,
                    str_cat("expected a JSON object, got ", json_type_name(row.fields)));
  }
  try {
    if (format == DatasetFormat::ShareGpt) row.messages = sharegpt_conversation(row.fields);
    if (format == DatasetFormat::OpenAiChat) row.messages = openai_conversation(row.fields);
  } catch (const Error& error) {
    throw_row_error(place, place.text_start, str_cat(to_string(format), " row: ", error.what()));
  }
  return row;
}

}  // namespace sluice
