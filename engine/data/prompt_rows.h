// Minimal instruction-file readers for the CLI: JSONL rows {"prompt": "...", "id": ...} and
// Alpaca JSON arrays [{instruction, input, output}]. Errors name the file and line. (The full
// dataset readers with format detection and column mapping live beside these.)
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sluice {

struct PromptRow {
  size_t line = 0;            // 1-based line (JSONL) or element index + 1 (JSON array)
  nlohmann::ordered_json id;  // the row's "id" as given, or null
  std::string prompt;
};

// Reads every row of a JSONL file. Blank lines are skipped; a UTF-8 BOM is allowed. Throws Error
// naming the file and line for malformed JSON, invalid UTF-8, a row without a string "prompt",
// or an empty file.
std::vector<PromptRow> read_jsonl_prompts(const std::string& path);

// Reads an Alpaca-style JSON array; prompt = instruction, then "\n\n" + input when input is not
// empty. Reads at most `limit` rows when limit > 0. Throws Error naming the file and element.
std::vector<PromptRow> read_alpaca_prompts(const std::string& path, size_t limit = 0);

// Reads either format, choosing by content (a file starting with '[' is a JSON array).
std::vector<PromptRow> read_prompt_file(const std::string& path, size_t limit = 0);

}  // namespace sluice
