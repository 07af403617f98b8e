#include "engine/export/dataset_card.h"

#include <algorithm>
#include <cstdio>

#include "engine/tokenizer/unicode.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

// Nested provenance deeper than this is shown as compact JSON (a card is read by people).
constexpr int kMaxProvenanceDepth = 8;

void append_escape(std::string& out, const char* format, unsigned value) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, format, value);
  out += buffer;
}

// Returns true for the characters YAML allows unescaped in a double-quoted scalar and that
// neither YAML 1.1 nor 1.2 reads as a line break: tab, U+0020..U+007E, U+00A0..U+D7FF (less the
// line and paragraph separators), U+E000..U+FFFD (less the byte order mark) and the planes above.
bool is_yaml_printable(char32_t c) {
  if (c == '\t') return true;
  if (c >= 0x20 && c <= 0x7E) return true;
  if (c == 0x2028 || c == 0x2029 || c == 0xFEFF) return false;
  if (c >= 0xA0 && c <= 0xD7FF) return true;
  if (c >= 0xE000 && c <= 0xFFFD) return true;
  return c >= 0x10000 && c <= 0x10FFFF;
}

std::string yaml_list(const std::vector<std::string>& items, const std::string& indent) {
  std::string out;
  for (const std::string& item : items) out += indent + "- " + yaml_quoted(item) + "\n";
  return out;
}

// The Hub's feature syntax for one column, as the items of a YAML list at indent.
std::string yaml_feature(const ParquetColumn& column, const std::string& indent) {
  std::string out = indent + "- name: " + yaml_quoted(column.name) + "\n";
  const std::string inner = indent + "  ";
  switch (column.type) {
    case ParquetType::String:
      return out + inner + "dtype: string\n";
    case ParquetType::Int64:
      return out + inner + "dtype: int64\n";
    case ParquetType::Double:
      return out + inner + "dtype: float64\n";
    case ParquetType::Bool:
      return out + inner + "dtype: bool\n";
    case ParquetType::StringList:
      return out + inner + "sequence: string\n";
    case ParquetType::Messages:
      out += inner + "list:\n";
      for (const char* field : kMessageFields)
        out += inner + "- name: " + field + "\n" + inner + "  dtype: string\n";
      return out;
  }
  return out;
}

std::string yaml_header(const DatasetCard& card) {
  uint64_t num_rows = 0;
  uint64_t num_bytes = 0;
  uint64_t download_bytes = 0;
  for (const DatasetCardSplit& split : card.splits) {
    num_rows += split.num_examples;
    num_bytes += split.num_bytes;
    download_bytes += split.download_bytes;
  }
  std::string out = "---\n";
  out += "license: " + yaml_quoted(card.license) + "\n";
  out += "pretty_name: " + yaml_quoted(card.pretty_name) + "\n";
  if (!card.language.empty()) out += "language:\n" + yaml_list(card.language, "");
  if (!card.tags.empty()) out += "tags:\n" + yaml_list(card.tags, "");
  if (!card.task_categories.empty())
    out += "task_categories:\n" + yaml_list(card.task_categories, "");
  out += "size_categories:\n- " + yaml_quoted(hub_size_category(num_rows)) + "\n";
  out += "configs:\n- config_name: default\n";
  if (card.splits.empty()) {
    out += "  data_files: []\n";
  } else {
    out += "  data_files:\n";
    for (const DatasetCardSplit& split : card.splits)
      out +=
          "  - split: " + yaml_quoted(split.name) + "\n    path: " + yaml_quoted(split.path) + "\n";
  }
  out += "dataset_info:\n";
  if (card.features.empty()) {
    out += "  features: []\n";
  } else {
    out += "  features:\n";
    for (const ParquetColumn& column : card.features) out += yaml_feature(column, "  ");
  }
  if (card.splits.empty()) {
    out += "  splits: []\n";
  } else {
    out += "  splits:\n";
    for (const DatasetCardSplit& split : card.splits)
      out += "  - name: " + yaml_quoted(split.name) +
             "\n    num_bytes: " + std::to_string(split.num_bytes) +
             "\n    num_examples: " + std::to_string(split.num_examples) + "\n";
  }
  out += "  download_size: " + std::to_string(download_bytes) + "\n";
  out += "  dataset_size: " + std::to_string(num_bytes) + "\n";
  out += "---\n";
  return out;
}

size_t longest_backtick_run(std::string_view text) {
  size_t longest = 0;
  size_t run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// Returns text as a Markdown code span (enough backticks that none inside closes it).
std::string code_span(std::string_view text) {
  if (text.empty()) return "*(empty)*";
  const std::string fence(longest_backtick_run(text) + 1, '`');
  const bool needs_padding = text.front() == '`' || text.back() == '`';
  std::string inner(text);
  std::replace(inner.begin(), inner.end(), '\n', ' ');
  return needs_padding ? fence + " " + inner + " " + fence : fence + inner + fence;
}

// Escapes the characters Markdown gives meaning to, for text shown as is (keys, names).
std::string markdown_text(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (std::string_view("\\`*_[]<>#|").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c == '\n' || c == '\r' ? ' ' : c);
  }
  return out;
}

// A table cell: a pipe would end the cell even inside a code span (GitHub's tables).
std::string table_cell(std::string text) {
  std::string out;
  for (const char c : text) {
    if (c == '|')
      out += "\\|";
    else
      out.push_back(c);
  }
  return out;
}

std::string scalar_markdown(const Json& value) {
  if (value.is_string()) return code_span(sanitize_utf8(value.get_ref<const std::string&>()));
  return code_span(value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

bool is_multiline_string(const Json& value) {
  return value.is_string() && value.get_ref<const std::string&>().find('\n') != std::string::npos;
}

bool is_array_of_objects(const Json& value) {
  return value.is_array() && !value.empty() &&
         std::all_of(value.begin(), value.end(), [](const Json& item) { return item.is_object(); });
}

std::string provenance_table(const Json& rows) {
  std::vector<std::string> keys;
  for (const Json& row : rows)
    for (const auto& [key, cell] : row.items())
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  // Appended piece by piece: GCC 12's -Wrestrict misreads chains of std::string operator+.
  std::string out = "|";
  for (const std::string& key : keys) {
    out += ' ';
    out += table_cell(markdown_text(key));
    out += " |";
  }
  out += "\n|";
  for (size_t i = 0; i < keys.size(); ++i) out += "---|";
  out += "\n";
  for (const Json& row : rows) {
    out += "|";
    for (const std::string& key : keys) {
      const auto cell = row.find(key);
      out += ' ';
      if (cell != row.end()) out += table_cell(scalar_markdown(*cell));
      out += " |";
    }
    out += "\n";
  }
  return out;
}

// A part of the provenance shown below its list: a table or a fenced block.
struct ProvenanceSection {
  std::string title;  // the key's path: "job_file", "parameters.chat_template"
  const Json* value;
};

void append_provenance_items(std::string& out, std::vector<ProvenanceSection>& sections,
                             const Json& object, const std::string& path, int depth) {
  const std::string indent(static_cast<size_t>(2 * depth), ' ');
  for (const auto& [key, value] : object.items()) {
    const std::string key_path = path.empty() ? key : path + "." + key;
    // Multi-line text (at any depth) and top-level lists of records get sections of their own.
    const bool is_section =
        is_multiline_string(value) || (depth == 0 && is_array_of_objects(value));
    if (is_section) sections.push_back({key_path, &value});
    if (is_section && depth == 0) continue;
    const std::string item = indent + "- **" + markdown_text(key) + "**:";
    if (is_section) {
      out += item + " *(below)*\n";
    } else if (value.is_object() && !value.empty() && depth < kMaxProvenanceDepth) {
      out += item + "\n";
      append_provenance_items(out, sections, value, key_path, depth + 1);
    } else if (value.is_array() && !value.empty() &&
               std::none_of(value.begin(), value.end(),
                            [](const Json& v) { return v.is_structured(); })) {
      out += item;
      for (size_t i = 0; i < value.size(); ++i) out += (i ? ", " : " ") + scalar_markdown(value[i]);
      out += "\n";
    } else {
      out += item + " " + scalar_markdown(value) + "\n";
    }
  }
}

}  // namespace

std::string yaml_quoted(std::string_view text) {
  std::string out = "\"";
  size_t offset = 0;
  while (offset < text.size()) {
    const Utf8Char ch = decode_utf8(text, offset);
    const size_t length = ch.num_bytes;
    const char32_t c = ch.status == Utf8Status::Valid ? ch.codepoint : kReplacementCharacter;
    offset += length;
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (!is_yaml_printable(c)) {
      append_escape(out, c <= 0xFF ? "\\x%02X" : "\\u%04X", static_cast<unsigned>(c));
      continue;
    }
    append_utf8(out, c);
  }
  return out + "\"";
}

std::string hub_size_category(uint64_t num_rows) {
  static constexpr const char* kNames[] = {"1K",   "10K", "100K", "1M",   "10M",
                                           "100M", "1B",  "10B",  "100B", "1T"};
  if (num_rows < 1000) return "n<1K";
  uint64_t bound = 1000;
  for (size_t i = 0; i + 1 < std::size(kNames); ++i, bound *= 10)
    if (num_rows < bound * 10) return std::string(kNames[i]) + "<n<" + kNames[i + 1];
  return "n>1T";
}

std::string render_provenance(const Json& provenance) {
  std::string out;
  std::vector<ProvenanceSection> sections;
  append_provenance_items(out, sections, provenance, "", 0);
  for (const ProvenanceSection& section : sections) {
    out += "\n### " + markdown_text(section.title) + "\n\n";
    if (section.value->is_array()) {
      // A list of records (the steps and their row counts) reads best as a table.
      out += provenance_table(*section.value);
      continue;
    }
    const std::string text = sanitize_utf8(section.value->get_ref<const std::string&>());
    const std::string fence(std::max<size_t>(3, longest_backtick_run(text) + 1), '`');
    out += fence + "\n" + text;
    if (text.back() != '\n') out += "\n";
    out += fence + "\n";
  }
  return out;
}

std::string render_dataset_card(const DatasetCard& card) {
  std::string out = yaml_header(card);
  std::string title = sanitize_utf8(card.pretty_name);
  std::replace(title.begin(), title.end(), '\n', ' ');
  out += "\n# " + markdown_text(title) + "\n\n";
  if (!card.description.empty()) out += card.description + "\n\n";
  out += "## Columns\n\n| column | type | description |\n|---|---|---|\n";
  for (const ParquetColumn& column : card.features) {
    const auto description = card.column_descriptions.find(column.name);
    std::string text =
        description == card.column_descriptions.end() ? "" : markdown_text(description->second);
    out += "| " + table_cell(code_span(sanitize_utf8(column.name))) + " | " +
           to_string(column.type) + (column.nullable ? "" : ", never null") + " | " +
           table_cell(std::move(text)) + " |\n";
  }
  if (!card.body_markdown.empty()) out += "\n" + card.body_markdown + "\n";
  if (!card.provenance.empty()) out += "\n## Provenance\n\n" + render_provenance(card.provenance);
  return out;
}

}  // namespace sluice
