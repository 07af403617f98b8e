#include "engine/input/dataset_reader.h"

#include "engine/input/csv_reader.h"
#include "engine/input/json_array_reader.h"
#include "engine/input/jsonl_reader.h"
#include "engine/input/text_reader.h"

namespace sluice {

DatasetReader::~DatasetReader() = default;

std::unique_ptr<DatasetReader> open_dataset(const std::string& path, DatasetFormat format) {
  const int first = first_content_byte(path);
  if (first < 0) fail(path, ": the file is empty (no rows)");
  if (format == DatasetFormat::Auto) format = detect_dataset_format(path);
  switch (format) {
    case DatasetFormat::Jsonl:
      return std::make_unique<JsonlReader>(path, format);
    case DatasetFormat::Json:
      return std::make_unique<JsonArrayReader>(path, format);
    case DatasetFormat::Csv:
    case DatasetFormat::Tsv:
      return std::make_unique<CsvReader>(path, format);
    case DatasetFormat::Text:
      return std::make_unique<TextReader>(path);
    case DatasetFormat::ShareGpt:
    case DatasetFormat::OpenAiChat:
    case DatasetFormat::OpenAiBatch:
      // Chat and batch records come both as JSONL and as a JSON array.
      if (first == '[') return std::make_unique<JsonArrayReader>(path, format);
      return std::make_unique<JsonlReader>(path, format);
    case DatasetFormat::Auto:
      break;
  }
  fail(path, ": no reader for dataset format ", to_string(format));
}

}  // namespace sluice
