// Which fields a dataset's rows have, from a sample of its first rows: what the column-template
// editor offers and what the default template is chosen from.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/input/dataset_format.h"

namespace sluice {

struct FieldInfo {
  std::string name;
  size_t num_present = 0;    // sampled rows that have the field
  size_t num_non_empty = 0;  // ... with a value that is not empty (see is_empty_field_value)
  size_t num_strings = 0;    // ... whose value is a JSON string (every CSV/TSV/text value)
  std::string example;  // the first non-empty value as text, cut to 80 characters (ending "...")
};

// Reads up to max_rows rows of the file (bad rows are skipped but count toward max_rows) and
// returns their fields in first-seen order. Throws Error when the file cannot be read as format
// (Auto: detected).
std::vector<FieldInfo> discover_fields(const std::string& path, DatasetFormat format,
                                       size_t max_rows = 1000);

}  // namespace sluice
