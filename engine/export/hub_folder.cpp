#include "engine/export/hub_folder.h"

#include <cmath>
#include <filesystem>
#include <system_error>

#include "engine/core/error.h"
#include "engine/export/export_output.h"
#include "engine/tokenizer/unicode.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

Json clean_string(const Json& value) {
  const auto& text = value.get_ref<const std::string&>();
  return is_valid_utf8(text) ? value : Json(sanitize_utf8(text));
}

Json jsonl_value(const Json& value, ParquetType type) {
  if (value.is_null()) return nullptr;
  switch (type) {
    case ParquetType::String:
      return clean_string(value);
    case ParquetType::Double:
      return value.get<double>();
    case ParquetType::Int64:
    case ParquetType::Bool:
      return value;
    case ParquetType::StringList: {
      Json list = Json::array();
      for (const Json& item : value) list.push_back(item.is_null() ? item : clean_string(item));
      return list;
    }
    case ParquetType::Messages: {
      Json list = Json::array();
      for (const Json& message : value) {
        if (message.is_null()) {
          list.push_back(nullptr);
          continue;
        }
        Json entry = Json::object();
        for (const char* field : kMessageFields) {
          const auto found = message.find(field);
          entry[field] = found == message.end() ? Json() : jsonl_value(*found, ParquetType::String);
        }
        list.push_back(std::move(entry));
      }
      return list;
    }
  }
  return value;
}

// Prepares dir: refuses a file, or a folder with something in it unless overwrite.
void prepare_hub_dir(const std::string& dir, bool overwrite) {
  std::error_code error;
  const auto status = fs::status(dir, error);
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) fail(dir, ": is not a folder; a Hub export writes a folder");
    if (!overwrite && !fs::is_empty(dir, error))
      fail(dir,
           ": the folder is not empty; choose an empty or new folder, or overwrite (which "
           "replaces ",
           kHubCardPath, ", ", kHubJsonlPath, " and ", kHubParquetPath, ")");
  }
  fs::create_directories(fs::path(dir) / "data", error);
  if (error) fail(dir, ": cannot create the export folder: ", error.message());
}

std::string hub_path(const std::string& dir, const char* relative) {
  return (fs::path(dir) / relative).string();
}

}  // namespace

Json hub_jsonl_record(const std::vector<ParquetColumn>& columns, const Json& row) {
  Json record = Json::object();
  for (const ParquetColumn& column : columns) {
    const auto found = row.find(column.name);
    record[column.name] = found == row.end() ? Json() : jsonl_value(*found, column.type);
  }
  return record;
}

struct HubFolderWriter::State {
  std::string dir;
  std::vector<ParquetColumn> columns;
  ExportOutput jsonl;
  ParquetWriter parquet;
  uint64_t jsonl_bytes = 0;

  State(std::string dir_in, std::vector<ParquetColumn> columns_in, const ParquetOptions& options)
      : dir(std::move(dir_in)),
        columns(std::move(columns_in)),
        jsonl(hub_path(dir, kHubJsonlPath)),
        parquet(hub_path(dir, kHubParquetPath), columns, options) {}
};

HubFolderWriter::HubFolderWriter(std::string dir, std::vector<ParquetColumn> columns,
                                 HubFolderOptions options) {
  check_parquet_columns(columns);
  prepare_hub_dir(dir, options.overwrite);
  state_ = std::make_unique<State>(std::move(dir), std::move(columns), options.parquet);
}

HubFolderWriter::~HubFolderWriter() = default;

void HubFolderWriter::add_row(const Json& row) {
  State& s = *state_;
  // JSON has no NaN or infinity: such a value would read back as null from the JSONL.
  if (row.is_object()) {
    for (const ParquetColumn& column : s.columns) {
      const auto found = row.find(column.name);
      if (column.type == ParquetType::Double && found != row.end() && found->is_number_float() &&
          !std::isfinite(found->get<double>()))
        fail(s.jsonl.path(), ": row ", s.parquet.num_rows(), ", column \"", column.name,
             "\": ", found->get<double>(), " has no JSON form");
    }
  }
  s.parquet.add_row(row);  // checks every value against its column, or throws
  const std::string line = hub_jsonl_record(s.columns, row).dump() + "\n";
  s.jsonl.write(line);
  s.jsonl_bytes += line.size();
}

HubFolderStats HubFolderWriter::finish(DatasetCard card) {
  State& s = *state_;
  s.jsonl.commit();
  const ParquetStats parquet = s.parquet.finish();
  card.features = s.columns;
  card.splits = {DatasetCardSplit{.name = "train",
                                  .path = kHubParquetPath,
                                  .num_examples = parquet.num_rows,
                                  .num_bytes = parquet.column_chunk_bytes,
                                  .download_bytes = parquet.file_bytes}};
  const std::string text = render_dataset_card(card);
  ExportOutput readme(hub_path(s.dir, kHubCardPath));
  readme.write(text);
  readme.commit();
  return {parquet.num_rows, parquet.num_row_groups, s.jsonl_bytes, parquet.file_bytes, text.size()};
}

HubFolderStats write_hub_folder(const std::string& dir, const HubDataset& dataset) {
  HubFolderWriter writer(dir, dataset.columns, dataset.options);
  for (const Json& row : dataset.rows) writer.add_row(row);
  return writer.finish(dataset.card);
}

}  // namespace sluice
