// A dataset's README.md as the Hugging Face Hub reads it: a YAML header (between "---" lines)
// with the metadata the Hub indexes and the dataset viewer loads by, then a Markdown body.
//
//   license, pretty_name, tags, task_categories (when given), size_categories (from the row
//   count), configs (the default config's data_files: one entry per split), dataset_info
//   (features in the Hub's syntax, splits with num_bytes and num_examples, download_size,
//   dataset_size)
//
// Features: String/Int64/Double/Bool as "dtype: string|int64|float64|bool", StringList as
// "sequence: string", Messages as "list: [{name: content, dtype: string}, {name: role, dtype:
// string}]" (how datasets writes list<struct<content, role>>). Every string scalar the caller
// controls is written double-quoted with YAML escapes (yaml_quoted), so a name holding ": ", "#",
// quotes, newlines or control characters parses back to itself.
//
// The body: "# <pretty_name>", the description, a table of the columns, body_markdown, and a
// Provenance section rendered from the provenance object (see render_provenance).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/export/parquet_schema.h"

namespace sluice {

struct DatasetCardSplit {
  std::string name = "train";
  std::string path = "data/train.parquet";  // relative to the README, as data_files takes it
  uint64_t num_examples = 0;
  uint64_t num_bytes = 0;       // the split's data, uncompressed
  uint64_t download_bytes = 0;  // the split's files as stored
};

struct DatasetCard {
  std::string pretty_name;
  std::string license = "other";  // a Hub license id: "apache-2.0", "cc-by-4.0", "other", ...
  std::vector<std::string> tags = {"synthetic", "sluice"};
  std::vector<std::string> task_categories;  // e.g. "text-generation"; left out when empty
  std::vector<std::string> language;         // e.g. "en"; left out when empty
  std::string description;                   // the body's first paragraphs (Markdown)
  std::vector<ParquetColumn> features;
  std::map<std::string, std::string> column_descriptions;  // column name → one line
  std::vector<DatasetCardSplit> splits;
  // What made the data: model file and SHA-256, quantization, chat template hash, sampling
  // parameters, seeds, Sluice version, the job description file, per-step row counts.
  nlohmann::ordered_json provenance = nlohmann::ordered_json::object();
  std::string body_markdown;  // more Markdown, after the columns
};

// Returns the README.md text.
std::string render_dataset_card(const DatasetCard& card);

// Returns text as a YAML double-quoted scalar: '"', '\' and line breaks escaped, and every
// character outside YAML's printable set (C0/C1 controls, DEL, U+FFFE/U+FFFF) as \xXX or \uXXXX;
// invalid UTF-8 becomes U+FFFD. Both YAML 1.1 (PyYAML) and 1.2 read it back to text.
std::string yaml_quoted(std::string_view text);

// Returns the Hub's size category for num_rows: "n<1K", "1K<n<10K", ..., "n>1T".
std::string hub_size_category(uint64_t num_rows);

// Returns provenance as Markdown: scalars as "- **key**: `value`", objects as nested lists; then
// sections: top-level arrays of objects as tables (a column per key, first-seen order), and
// strings of several lines at any depth (the job description file, a chat template) as
// "### key.path" and a fenced block holding them verbatim (a nested one's item says "(below)").
std::string render_provenance(const nlohmann::ordered_json& provenance);

}  // namespace sluice
