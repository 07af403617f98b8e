#include "engine/export/export_csv.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/export/export_output.h"
#include "engine/export/export_rows.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/row_codec.h"
#include "engine/tokenizer/unicode.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

// What the first pass learns: the input columns in first-seen order, the most samples a row
// has (at least 1, so the output column is always there) and, with flatten_output, the keys of
// the outputs that get columns.
struct CsvLayout {
  std::vector<std::string> input_fields;
  std::vector<std::string> input_headers;  // input_fields, renamed where they hit a result column
  size_t num_output_columns = 1;
  std::vector<std::string> output_keys;
  // ReasoningExport::Separate and some exported sample has reasoning: the reasoning columns
  // ("reasoning", "reasoning_1", ... as many as the output columns, and "reasoning_tokens") are
  // written. Never for a job without reasoning, whose columns stay as they were.
  bool has_reasoning_columns = false;
};

// The name of sample i's column: "output", "output_1", ...
std::string output_column_name(size_t i) {
  return i == 0 ? std::string("output") : str_cat("output_", i);
}

// The name of sample i's reasoning column: "reasoning", "reasoning_1", ...
std::string reasoning_column_name(size_t i) {
  return i == 0 ? std::string("reasoning") : str_cat("reasoning_", i);
}

// Returns output parsed when it is a JSON object; nullopt for anything else (not JSON, too deep,
// an array, a string, ...).
std::optional<Json> parse_output_object(const std::string& output) {
  Json value;
  if (try_parse_json(output, value) || !value.is_object()) return std::nullopt;
  return value;
}

// The "properties" keys of the job's JSON Schema grammar in schema order; empty when the job
// has no such grammar (or its schema lists no properties).
std::vector<std::string> schema_property_keys(const JobStore& job) {
  const Json& params = job.info().params;
  const auto grammar = params.find("grammar");
  if (grammar == params.end() || !grammar->is_object()) return {};
  const auto kind = grammar->find("kind");
  const auto text = grammar->find("text");
  if (kind == grammar->end() || *kind != "json_schema" || text == grammar->end() ||
      !text->is_string())
    return {};
  Json schema;
  if (try_parse_json(text->get_ref<const std::string&>(), schema) || !schema.is_object()) return {};
  const auto properties = schema.find("properties");
  if (properties == schema.end() || !properties->is_object()) return {};
  std::vector<std::string> keys;
  for (const auto& [key, value] : properties->items()) keys.push_back(key);
  return keys;
}

// Collects output keys, schema keys first, refusing more than kMaxFlattenedKeys.
class OutputKeys {
 public:
  explicit OutputKeys(const JobStore& job) : job_(job) {}

  void add(const std::string& key, const std::string& where) {
    if (seen_.contains(key)) return;
    if (keys_.size() == kMaxFlattenedKeys)
      fail(job_.path(), ": ", where, ": more than ", kMaxFlattenedKeys,
           " distinct top-level output keys to flatten (key \"", key,
           "\" is one too many); flattening writes at most ", kMaxFlattenedKeys,
           " columns per sample, export without it");
    seen_.insert(key);
    keys_.push_back(key);
  }

  std::vector<std::string> take() { return std::move(keys_); }

 private:
  const JobStore& job_;
  std::vector<std::string> keys_;
  std::unordered_set<std::string> seen_;
};

// Returns true for "<prefix>1", "<prefix>2", ...: the names of the extra sample columns with
// prefix "output_" or "reasoning_".
bool is_numbered_column_name(const std::string& name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.rfind(prefix, 0) != 0) return false;
  return std::all_of(name.begin() + prefix.size(), name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

// The header of each input field. Result columns keep their names (a tool reading "output"
// gets the generated text); an input field with a result column's name is kept as
// "input_<name>", prefixed again until no column has that name ("input_input_output" when the
// input also has "input_output").
// flattened_headers (the output fields' columns) are result columns too, and so are the
// reasoning columns when has_reasoning_columns.
std::vector<std::string> input_headers_for(const std::vector<std::string>& input_fields,
                                           const std::unordered_set<std::string>& flattened_headers,
                                           bool has_reasoning_columns) {
  static const std::unordered_set<std::string> kFixedColumns = {
      "row_index",     "status",        "prompt",   "output",
      "output_tokens", "finish_reason", "total_ms", "error"};
  const auto is_reasoning_column = [&](const std::string& name) {
    return has_reasoning_columns && (name == "reasoning" || name == "reasoning_tokens" ||
                                     is_numbered_column_name(name, "reasoning_"));
  };
  const auto is_result_column = [&](const std::string& name) {
    return kFixedColumns.contains(name) || is_numbered_column_name(name, "output_") ||
           flattened_headers.contains(name) || is_reasoning_column(name);
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

// The flattened columns' names: "<sample column>.<key>" for every sample column and key.
std::vector<std::string> flattened_headers(const CsvLayout& layout) {
  std::vector<std::string> headers;
  for (size_t i = 0; i < layout.num_output_columns; ++i) {
    for (const std::string& key : layout.output_keys)
      headers.push_back(str_cat(output_column_name(i), ".", key));
  }
  return headers;
}

CsvLayout scan_layout(const JobStore& job, const ExportOptions& options) {
  CsvLayout layout;
  std::unordered_set<std::string> seen;
  OutputKeys output_keys(job);
  if (options.flatten_output) {
    for (const std::string& key : schema_property_keys(job))
      output_keys.add(key, "the JSON Schema's properties");
  }
  for_each_readable_row(job, [&](const RowResult& row) {
    if (why_row_left_out(row, options, /*honours_include_failed=*/true)) return;
    layout.num_output_columns = std::max(layout.num_output_columns, row.samples.size());
    if (options.reasoning == ReasoningExport::Separate) {
      for (const SampleResult& sample : row.samples)
        layout.has_reasoning_columns |= has_reasoning(sample);
    }
    if (options.flatten_output) {
      for (const SampleResult& sample : row.samples) {
        const std::optional<Json> object = parse_output_object(sample.output);
        if (!object) continue;
        for (const auto& [key, value] : object->items())
          output_keys.add(key, str_cat("row ", row.row_index));
      }
    }
    if (!row.input.is_object()) return;
    for (const auto& [key, value] : row.input.items()) {
      if (seen.insert(key).second) layout.input_fields.push_back(key);
    }
  });
  layout.output_keys = output_keys.take();
  const std::vector<std::string> flattened = flattened_headers(layout);
  layout.input_headers = input_headers_for(
      layout.input_fields, {flattened.begin(), flattened.end()}, layout.has_reasoning_columns);
  return layout;
}

// The text of an output field's cell: strings as is, null empty, anything else as JSON.
std::string field_cell(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return {};
  return to_json_text(value);
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
  for (size_t i = 1; i < layout.num_output_columns; ++i) header.push_back(output_column_name(i));
  const std::vector<std::string> flattened = flattened_headers(layout);
  header.insert(header.end(), flattened.begin(), flattened.end());
  if (layout.has_reasoning_columns) {
    for (size_t i = 0; i < layout.num_output_columns; ++i)
      header.push_back(reasoning_column_name(i));
  }
  header.push_back("output_tokens");
  if (layout.has_reasoning_columns) header.push_back("reasoning_tokens");
  header.insert(header.end(), {"finish_reason", "total_ms"});
  if (options.include_failed) header.push_back("error");
  return header;
}

// The flattened fields come from the answers (row's outputs), whatever options.reasoning
// writes in the output columns: under keep, "<think>...</think>" before a JSON answer would
// leave them empty.
std::vector<std::string> row_fields(const RowResult& row, const CsvLayout& layout,
                                    const ExportOptions& options) {
  RowResult storage;
  const std::vector<SampleResult>& samples =
      row_for_export(row, options.reasoning, storage).samples;
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
    fields.push_back(i < samples.size() ? samples[i].output : std::string());
  for (size_t i = 0; i < layout.num_output_columns; ++i) {
    const std::optional<Json> object =
        i < row.samples.size() ? parse_output_object(row.samples[i].output) : std::nullopt;
    for (const std::string& key : layout.output_keys) {
      if (!object) {
        fields.emplace_back();
        continue;
      }
      const auto it = object->find(key);
      fields.push_back(it != object->end() ? field_cell(*it) : std::string());
    }
  }
  if (layout.has_reasoning_columns) {
    for (size_t i = 0; i < layout.num_output_columns; ++i)
      fields.push_back(i < samples.size() ? samples[i].reasoning : std::string());
  }
  const bool has_sample = !samples.empty();
  fields.push_back(has_sample ? std::to_string(samples[0].output_tokens) : std::string());
  if (layout.has_reasoning_columns)
    fields.push_back(has_sample ? std::to_string(samples[0].reasoning_tokens) : std::string());
  fields.push_back(has_sample ? samples[0].finish_reason : std::string());
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
    if (const char* why = why_row_left_out(row, options, /*honours_include_failed=*/true)) {
      stats.leave_out(why);
      return;
    }
    write_record(out, row_fields(row, layout, options));
    stats.rows_written++;
    stats.records_written++;
  });
  return stats;
}

}  // namespace sluice
