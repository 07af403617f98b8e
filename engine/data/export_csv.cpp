#include "engine/data/export_csv.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_set>
#include <vector>

#include "engine/core/error.h"
#include "engine/data/export_output.h"
#include "engine/data/export_rows.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/row_codec.h"
#include "engine/tokenizer/unicode.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

// What the first pass learns: the input columns in first-seen order and the most samples a row
// has (at least 1, so the output column is always there).
struct CsvLayout {
  std::vector<std::string> input_fields;
  std::vector<std::string> input_headers;  // input_fields, renamed where they hit a result column
  size_t num_output_columns = 1;
};

// Returns true for "output_1", "output_2", ...: the names of the extra sample columns.
bool is_output_column_name(const std::string& name) {
  constexpr std::string_view kPrefix = "output_";
  if (name.size() <= kPrefix.size() || name.rfind(kPrefix, 0) != 0) return false;
  return std::all_of(name.begin() + kPrefix.size(), name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

// The header of each input field. Result columns keep their names (a tool reading "output"
// gets the generated text); an input field with a result column's name is kept as
// "input_<name>", prefixed again until no column has that name ("input_input_output" when the
// input also has "input_output").
std::vector<std::string> input_headers_for(const std::vector<std::string>& input_fields) {
  static const std::unordered_set<std::string> kFixedColumns = {
      "row_index",     "status",        "prompt",   "output",
      "output_tokens", "finish_reason", "total_ms", "error"};
  const auto is_result_column = [](const std::string& name) {
    return kFixedColumns.contains(name) || is_output_column_name(name);
  };
  std::unordered_set<std::string> taken(input_fields.begin(), input_fields.end());
  std::vector<std::string> headers;
  for (const std::string& field : input_fields) {
    if (!is_result_column(field)) {
      headers.push_back(field);
      continue;
    }
    std::string header = "input_" + field;
    while (taken.contains(header) || is_result_column(header)) header = "input_" + header;
    taken.insert(header);
    headers.push_back(header);
  }
  return headers;
}

CsvLayout scan_layout(const JobStore& job, const ExportOptions& options) {
  CsvLayout layout;
  std::unordered_set<std::string> seen;
  for_each_readable_row(job, [&](const RowResult& row) {
    if (!is_row_exported(row, options, /*honours_include_failed=*/true)) return;
    layout.num_output_columns = std::max(layout.num_output_columns, row.samples.size());
    if (!row.input.is_object()) return;
    for (const auto& [key, value] : row.input.items()) {
      if (seen.insert(key).second) layout.input_fields.push_back(key);
    }
  });
  layout.input_headers = input_headers_for(layout.input_fields);
  return layout;
}

std::string number_text(double value) {
  return to_json_text(Json(value));
}

void write_record(ExportOutput& out, const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line += ',';
    line += csv_field(fields[i]);
  }
  line += "\r\n";
  out.write(line);
}

std::vector<std::string> header_fields(const CsvLayout& layout, const ExportOptions& options) {
  std::vector<std::string> header = {"row_index", "status"};
  header.insert(header.end(), layout.input_headers.begin(), layout.input_headers.end());
  header.push_back("prompt");
  header.push_back("output");
  for (size_t i = 1; i < layout.num_output_columns; ++i) header.push_back(str_cat("output_", i));
  header.insert(header.end(), {"output_tokens", "finish_reason", "total_ms"});
  if (options.include_failed) header.push_back("error");
  return header;
}

std::vector<std::string> row_fields(const RowResult& row, const CsvLayout& layout,
                                    const ExportOptions& options) {
  std::vector<std::string> fields = {std::to_string(row.row_index), to_string(row.status)};
  for (const std::string& name : layout.input_fields) {
    const auto it = row.input.is_object() ? row.input.find(name) : row.input.end();
    if (it == row.input.end()) {
      fields.emplace_back();
    } else {
      fields.push_back(it->is_string() ? it->get<std::string>() : to_json_text(*it));
    }
  }
  fields.push_back(row.prompt);
  for (size_t i = 0; i < layout.num_output_columns; ++i)
    fields.push_back(i < row.samples.size() ? row.samples[i].output : std::string());
  const bool has_sample = !row.samples.empty();
  fields.push_back(has_sample ? std::to_string(row.samples[0].output_tokens) : std::string());
  fields.push_back(has_sample ? row.samples[0].finish_reason : std::string());
  fields.push_back(number_text(row.total_ms));
  if (options.include_failed) fields.push_back(row.error);
  return fields;
}

}  // namespace

std::string csv_field(std::string_view field) {
  std::string text = sanitize_utf8(field);
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

ExportStats write_csv_export(const JobStore& job, ExportOutput& out, const ExportOptions& options) {
  const CsvLayout layout = scan_layout(job, options);
  write_record(out, header_fields(layout, options));
  ExportStats stats;
  for_each_readable_row(job, stats, [&](const RowResult& row) {
    if (!is_row_exported(row, options, /*honours_include_failed=*/true)) {
      stats.leave_out(to_string(row.status));
      return;
    }
    write_record(out, row_fields(row, layout, options));
    stats.rows_written++;
    stats.records_written++;
  });
  return stats;
}

}  // namespace sluice
