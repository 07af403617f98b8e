// The shapes of instruction files Sluice reads, their names on the command line, and detection
// of a file's shape from its content (the extension is only a hint: a ".json" file is often
// JSONL, and chat files come in both containers).
#pragma once

#include <string>
#include <string_view>

namespace sluice {

enum class DatasetFormat {
  Auto,         // detect from the content (only as a request; readers report a concrete format)
  Jsonl,        // one JSON object per line
  Json,         // a JSON array of objects
  Csv,          // RFC 4180, header row first
  Tsv,          // the same with tabs
  Text,         // one prompt per line
  ShareGpt,     // {"conversations": [{"from", "value"}]} objects, in JSONL or a JSON array
  OpenAiChat,   // {"messages": [{"role", "content"}]} objects, in JSONL or a JSON array
  OpenAiBatch,  // OpenAI Batch API input: {"custom_id", "method", "url", "body"} objects per line
};

// Returns the format's command-line name: "auto", "jsonl", "json", "csv", "tsv", "text",
// "sharegpt", "openai", "openai-batch".
const char* to_string(DatasetFormat format);

// Returns the format named by name (as to_string writes it; case-insensitive). Throws Error
// listing the valid names otherwise.
DatasetFormat parse_dataset_format(std::string_view name);

// Returns true for the formats whose rows carry a conversation (ShareGpt, OpenAiChat).
bool is_chat_format(DatasetFormat format);

// Returns the concrete format of the file at path, judged by its content (a UTF-8 BOM is
// skipped; '[' -> a JSON array, '{' -> JSONL, either refined to ShareGpt / OpenAiChat /
// OpenAiBatch by what most of the first 64 good rows are), then by extension and delimiter sniffing
// for CSV/TSV, otherwise Text. Rows that do not fit the format found are the reader's bad rows,
// never read as another format. Throws Error when the file cannot be read or holds nothing but
// whitespace.
DatasetFormat detect_dataset_format(const std::string& path);

}  // namespace sluice
