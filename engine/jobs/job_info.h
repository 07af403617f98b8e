// What a job is: the source file it reads (with its digest, so a resume can tell whether the file
// changed), the model, and every generation parameter. Stored once per job file as JSON; the
// counts of finished rows are derived from the stored results.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sluice {

// The most grammar notes a job keeps (JobInfo::grammar_notes).
inline constexpr size_t kMaxJobGrammarNotes = 20;

struct JobInfo {
  std::string source_path;
  std::string source_sha256;  // sha256_file_hex of the source when the job was created
  int64_t source_size_bytes = 0;
  std::string source_format;  // "jsonl", "csv", "sharegpt", ...
  std::string model_path;
  std::string model_identity;  // what names the weights (architecture, digest, ...)
  // Every generation parameter: sampling, engine limits, prompt template, system prompt, chat
  // template source, n, seed, ... The exporters read "n" from here when present.
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  std::string created_at;   // ISO 8601 UTC ("2025-01-31T12:00:00Z"), set by JobStore::create
  int64_t total_rows = -1;  // -1 until the reader has counted the source's rows
  // What compiling the job's grammars ignored or dropped (Grammar::notes()), "<source>: <note>",
  // once per distinct grammar, at most kMaxJobGrammarNotes; has_more_grammar_notes when more were
  // left out. Stored only when there are some (older jobs have none).
  std::vector<std::string> grammar_notes;
  bool has_more_grammar_notes = false;

  bool operator==(const JobInfo&) const = default;
};

struct JobCounts {
  int64_t done = 0;
  int64_t failed = 0;
  int64_t skipped = 0;
  int64_t unreadable = 0;   // stored rows with an unknown status (damaged); a resume reruns them
  int64_t total_rows = -1;  // JobInfo::total_rows

  // Returns done + failed + skipped: rows a resume will not run again.
  int64_t finished() const { return done + failed + skipped; }
};

// Returns info as a JSON object with one key per field, in declaration order.
nlohmann::ordered_json job_info_to_json(const JobInfo& info);

// Parses job_info_to_json's output. Throws Error naming `where` (the job file) and the key at
// fault when a key is missing or has the wrong type.
JobInfo job_info_from_json(const nlohmann::ordered_json& json, const std::string& where);

// Returns the current time as ISO 8601 UTC with second precision ("2025-01-31T12:00:00Z").
std::string utc_timestamp_now();

}  // namespace sluice
