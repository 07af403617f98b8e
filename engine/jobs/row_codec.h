// How a RowResult maps to the job file's `rows` table and back. The nested parts (input,
// messages, samples) are JSON text so that a job file can be inspected with the sqlite3 shell;
// the exporters reuse the same JSON shapes.
//
// Strings are stored as UTF-8: any invalid bytes inside JSON columns are replaced by U+FFFD on
// the way in (the detokenizer already emits valid UTF-8, so this only touches odd source data).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/jobs/row_result.h"

namespace sluice {

class SqliteStatement;

// The rows table's columns in the order bind_row_result binds and read_row_result reads them.
inline constexpr const char* kRowColumns =
    "row_index, line, status, error, input, messages, prompt, prompt_tokens, samples, seed, "
    "queue_ms, ttft_ms, total_ms";

// Returns [{"role": ..., "content": ...}, ...].
nlohmann::ordered_json messages_to_json(const Conversation& messages);

// Returns {"output", "output_tokens", "finish_reason", "output_token_ids", "extra"} in that order.
nlohmann::ordered_json sample_to_json(const SampleResult& sample);

// Returns the JSON text of value with invalid UTF-8 replaced by U+FFFD (never throws for text).
std::string to_json_text(const nlohmann::ordered_json& value);

// Binds result to parameters 1..13 of an INSERT over kRowColumns.
void bind_row_result(SqliteStatement& statement, const RowResult& result);

// Reads the current row of a SELECT over kRowColumns. Throws Error naming path, the row index and
// the column when a value has the wrong type or its JSON does not parse.
RowResult read_row_result(const SqliteStatement& statement, const std::string& path);

}  // namespace sluice
