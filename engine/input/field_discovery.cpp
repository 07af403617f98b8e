#include "engine/input/field_discovery.h"

#include <unordered_map>

#include "engine/input/dataset_reader.h"
#include "engine/input/field_value.h"

namespace sluice {

namespace {

constexpr size_t kMaxExampleChars = 80;

// Returns the byte offset where the code point numbered char_idx starts (text.size() when text
// has fewer), never splitting a UTF-8 sequence.
size_t utf8_char_offset(const std::string& text, size_t char_idx) {
  size_t num_chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool starts_char = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    if (starts_char && num_chars++ == char_idx) return i;
  }
  return text.size();
}

// Cuts text to at most max_chars code points, marking a cut with "...".
std::string truncate_utf8(const std::string& text, size_t max_chars) {
  if (utf8_char_offset(text, max_chars) == text.size()) return text;
  return text.substr(0, utf8_char_offset(text, max_chars - 3)) + "...";
}

}  // namespace

std::vector<FieldInfo> discover_fields(const std::string& path, DatasetFormat format,
                                       size_t max_rows) {
  const auto reader = open_dataset(path, format);
  std::vector<FieldInfo> fields;
  std::unordered_map<std::string, size_t> field_idx_by_name;
  for (size_t num_rows = 0; num_rows < max_rows; ++num_rows) {
    std::optional<DatasetRow> row;
    try {
      row = reader->next();
    } catch (const DatasetRowError&) {
      continue;  // a preview should show the good rows; the job reports the bad ones
    }
    if (!row) break;
    for (const auto& [name, value] : row->fields.items()) {
      auto [it, is_new] = field_idx_by_name.try_emplace(name, fields.size());
      if (is_new) fields.emplace_back().name = name;
      FieldInfo& info = fields[it->second];
      ++info.num_present;
      if (value.is_string()) ++info.num_strings;
      if (is_empty_field_value(value)) continue;
      if (info.num_non_empty++ == 0) {
        info.example = truncate_utf8(field_value_text(value), kMaxExampleChars);
      }
    }
  }
  return fields;
}

}  // namespace sluice
