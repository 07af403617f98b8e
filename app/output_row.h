// A job's row as `sluice generate` writes it to its JSONL output.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/jobs/row_result.h"

namespace sluice {

// Returns the row as `sluice generate` writes it: id (the input's "id" or the row index),
// prompt, prompt_tokens, output (a thinking model's answer, its reasoning before it in
// "reasoning", with reasoning_tokens of output_tokens), output_tokens, finish_reason (or samples
// for n > 1), timings, error, and output_token_ids when kept.
nlohmann::ordered_json output_row_json(const RowResult& result);

// Serialises an output row as one JSONL line (invalid UTF-8 replaced, never thrown on).
std::string dump_jsonl_row(const nlohmann::ordered_json& row);

}  // namespace sluice
