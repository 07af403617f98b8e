#include "engine/input/dataset_format.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <optional>

#include "engine/core/error.h"
#include "engine/input/chat_conversation.h"
#include "engine/input/csv_record_reader.h"
#include "engine/input/json_array_reader.h"
#include "engine/input/jsonl_reader.h"

namespace sluice {

namespace {

constexpr std::array kNamedFormats = {
    DatasetFormat::Auto,     DatasetFormat::Jsonl,      DatasetFormat::Json,
    DatasetFormat::Csv,      DatasetFormat::Tsv,        DatasetFormat::Text,
    DatasetFormat::ShareGpt, DatasetFormat::OpenAiChat, DatasetFormat::OpenAiBatch,
};

// Good rows whose shapes decide between plain JSON and the chat formats, and rows read at most
// while looking for them. A JSON file may open with a few bad rows, but one without a good row
// among its first few is not JSON.
constexpr int kNumRowsToJudge = 64;
constexpr int kMaxRowsToSniff = 256;
constexpr int kMaxLeadingBadRows = 8;
// Records looked at when deciding whether a file without a telling extension is CSV/TSV.
constexpr int kMaxRecordsToSniff = 20;
constexpr size_t kMaxHeaderNameBytes = 64;
// Sniffing reads at most this much of a file, so that a text file opening with an unclosed '['
// or '"' is not scanned (and held) to its end. A 10 MB first JSONL line still fits.
constexpr uint64_t kMaxSniffBytes = 32 * 1024 * 1024;

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Returns true for a line of an OpenAI Batch input file: it has a custom_id and a body (the
// other keys are the batch reader's to check, so that a line missing one is named, not re-read
// as a plain row).
bool is_batch_record(const nlohmann::ordered_json& record) {
  return record.contains("custom_id") && record.contains("body");
}

// Returns the format of reader's rows judged by what most of its first good rows are (plain
// rows, ShareGPT, OpenAI or OpenAI Batch records; a tie goes to the chat format, whose reader then
// names the rows that do not fit), plain_format for a file that cleanly has no rows (an empty
// array), and nullopt when no good row was found among the first few.
std::optional<DatasetFormat> sniff_json_rows(DatasetReader& reader, DatasetFormat plain_format) {
  int num_plain = 0;
  int num_sharegpt = 0;
  int num_openai = 0;
  int num_batch = 0;
  bool has_no_rows = false;
  for (int i = 0; i < kMaxRowsToSniff; ++i) {
    const int num_good = num_plain + num_sharegpt + num_openai + num_batch;
    if (num_good == kNumRowsToJudge || (num_good == 0 && i == kMaxLeadingBadRows)) break;
    try {
      const auto row = reader.next();
      if (!row) {
        has_no_rows = i == 0;
        break;
      }
      const DatasetFormat chat = detect_chat_format(row->fields);
      if (is_batch_record(row->fields)) {
        ++num_batch;
      } else if (chat == DatasetFormat::ShareGpt) {
        ++num_sharegpt;
      } else if (chat == DatasetFormat::OpenAiChat) {
        ++num_openai;
      } else {
        ++num_plain;
      }
    } catch (const DatasetRowError&) {
      continue;  // a bad row says nothing about the others
    } catch (const Error&) {
      break;  // broken (or cut at the sniffing limit); the rows so far decide
    }
  }
  if (num_plain + num_sharegpt + num_openai + num_batch == 0) {
    return has_no_rows ? std::optional(plain_format) : std::nullopt;
  }
  if (num_batch > std::max({num_plain, num_sharegpt, num_openai}))
    return DatasetFormat::OpenAiBatch;
  if (num_plain > std::max(num_sharegpt, num_openai)) return plain_format;
  return num_sharegpt >= num_openai ? DatasetFormat::ShareGpt : DatasetFormat::OpenAiChat;
}

// Returns the JSON format of a file whose content starts with first ('[' or '{'), or nullopt
// when no row of it reads as JSON.
std::optional<DatasetFormat> sniff_json(const std::string& path, int first) {
  if (first == '[') {
    JsonArrayReader reader(path, DatasetFormat::Json, kMaxSniffBytes);
    return sniff_json_rows(reader, DatasetFormat::Json);
  }
  JsonlReader reader(path, DatasetFormat::Jsonl, kMaxSniffBytes);
  return sniff_json_rows(reader, DatasetFormat::Jsonl);
}

// Returns true when the file reads as a table with this delimiter: a header of at least two
// short, non-empty names, and every sniffed record well-formed with the header's width.
bool looks_delimited(const std::string& path, char delimiter) {
  TextInput input(path, kMaxSniffBytes);
  input.skip_bom();
  CsvRecordReader records(input, delimiter);
  CsvRecord record;
  if (!records.read(record) || !record.error.empty() || record.values.size() < 2) return false;
  for (const std::string& name : record.values) {
    if (name.empty() || name.size() > kMaxHeaderNameBytes) return false;
  }
  const size_t num_columns = record.values.size();
  int num_records = 0;
  while (num_records < kMaxRecordsToSniff && records.read(record)) {
    const bool is_well_formed = record.error.empty() && record.values.size() == num_columns;
    // A record cut by the sniffing limit proves nothing either way.
    if (!is_well_formed) return input.peek() < 0 && num_records > 0;
    ++num_records;
  }
  return num_records > 0;
}

}  // namespace

const char* to_string(DatasetFormat format) {
  switch (format) {
    case DatasetFormat::Auto:
      return "auto";
    case DatasetFormat::Jsonl:
      return "jsonl";
    case DatasetFormat::Json:
      return "json";
    case DatasetFormat::Csv:
      return "csv";
    case DatasetFormat::Tsv:
      return "tsv";
    case DatasetFormat::Text:
      return "text";
    case DatasetFormat::ShareGpt:
      return "sharegpt";
    case DatasetFormat::OpenAiChat:
      return "openai";
    case DatasetFormat::OpenAiBatch:
      return "openai-batch";
  }
  return "unknown";
}

DatasetFormat parse_dataset_format(std::string_view name) {
  const std::string wanted = lowercase(name);
  std::string names;
  for (const DatasetFormat format : kNamedFormats) {
    if (wanted == to_string(format)) return format;
    names += names.empty() ? "" : ", ";
    names += to_string(format);
  }
  fail("unknown dataset format \"", name, "\" (expected one of: ", names, ")");
}

bool is_chat_format(DatasetFormat format) {
  return format == DatasetFormat::ShareGpt || format == DatasetFormat::OpenAiChat;
}

DatasetFormat detect_dataset_format(const std::string& path) {
  const int first = first_content_byte(path);
  if (first < 0) fail(path, ": the file is empty");
  const std::string extension = lowercase(std::filesystem::path(path).extension().string());
  const bool is_table_or_text_name = extension == ".csv" || extension == ".tsv" ||
                                     extension == ".tab" || extension == ".txt" ||
                                     extension == ".text";
  if (first == '[' || first == '{') {
    if (const auto json_format = sniff_json(path, first)) return *json_format;
    // Not one good JSON row: "[Draft] write a poem" in a .txt file is text; without such a
    // name, reading it as JSON at least names the broken line.
    if (!is_table_or_text_name) return first == '[' ? DatasetFormat::Json : DatasetFormat::Jsonl;
  }
  if (extension == ".csv") return DatasetFormat::Csv;
  if (extension == ".tsv" || extension == ".tab") return DatasetFormat::Tsv;
  // A JSON file that does not start like JSON is still best read as JSON, so that the reader
  // names the bad line instead of turning it into prompts.
  if (extension == ".jsonl" || extension == ".ndjson" || extension == ".json") {
    return DatasetFormat::Jsonl;
  }
  // Prose has commas; a ".txt" file is text whatever its punctuation.
  if (extension == ".txt" || extension == ".text") return DatasetFormat::Text;
  if (looks_delimited(path, '\t')) return DatasetFormat::Tsv;
  if (looks_delimited(path, ',')) return DatasetFormat::Csv;
  return DatasetFormat::Text;
}

}  // namespace sluice
