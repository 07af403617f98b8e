// A folder ready to push to the Hugging Face Hub as a dataset repository:
//
//   <dir>/data/train.jsonl    one JSON object per line: every column, in column order, null
//                             where the row has none (a Messages entry always has content and
//                             role); the values the Parquet file holds
//   <dir>/data/train.parquet  the same rows (parquet_writer.h)
//   <dir>/README.md           the dataset card (dataset_card.h) with the features, the row count
//                             and the sizes of the files written: num_bytes the Parquet file's
//                             column chunks, download_size its size on disk
//
// The card's data_files names the Parquet file only, so the Hub loads one copy of the data; the
// JSONL is for people and tools that read JSON. Each file appears only complete (written beside
// and renamed) and README.md goes last, so a folder with a README holds all three. The same rows
// and card give the same bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/export/dataset_card.h"
#include "engine/export/parquet_writer.h"

namespace sluice {

inline constexpr const char* kHubJsonlPath = "data/train.jsonl";
inline constexpr const char* kHubParquetPath = "data/train.parquet";
inline constexpr const char* kHubCardPath = "README.md";

struct HubFolderOptions {
  // Lets the writer use a folder that is not empty: it then replaces the three files and leaves
  // everything else there as it is.
  bool overwrite = false;
  ParquetOptions parquet;
};

struct HubDataset {
  std::vector<ParquetColumn> columns;
  std::vector<nlohmann::ordered_json> rows;  // see ParquetWriter::add_row for the values
  // The card's text; its features and splits are filled from the columns and the files written.
  DatasetCard card;
  HubFolderOptions options;
};

struct HubFolderStats {
  uint64_t num_rows = 0;
  size_t num_row_groups = 0;
  uint64_t jsonl_bytes = 0;
  uint64_t parquet_bytes = 0;
  uint64_t card_bytes = 0;
};

// Writes a Hub folder row by row: only a Parquet row group is held in memory.
class HubFolderWriter {
 public:
  // Creates dir and dir/data. Throws Error when dir is a file, or a folder that is not empty
  // and options.overwrite is not set, or the columns cannot make a Parquet file.
  HubFolderWriter(std::string dir, std::vector<ParquetColumn> columns,
                  HubFolderOptions options = {});
  ~HubFolderWriter();
  HubFolderWriter(const HubFolderWriter&) = delete;
  HubFolderWriter& operator=(const HubFolderWriter&) = delete;

  // Adds one row to both files. Throws Error naming the row and column when a value does not
  // fit its column, or is a number JSON cannot hold (NaN, infinity); the row is then in neither.
  void add_row(const nlohmann::ordered_json& row);
  // Finishes both data files, then writes README.md from card (its features and splits
  // replaced by the columns and the files' counts).
  HubFolderStats finish(DatasetCard card);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Writes dataset to dir in one go (see HubFolderWriter).
HubFolderStats write_hub_folder(const std::string& dir, const HubDataset& dataset);

// Returns row's JSONL object for columns: each column's value in column order (null when
// missing), strings with invalid UTF-8 replaced by U+FFFD, Double values as doubles, messages
// as {content, role}. Precondition: the row fits the columns (ParquetWriter::add_row took it).
nlohmann::ordered_json hub_jsonl_record(const std::vector<ParquetColumn>& columns,
                                        const nlohmann::ordered_json& row);

}  // namespace sluice
