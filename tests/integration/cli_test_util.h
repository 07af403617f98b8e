// Helpers for CLI tests: run `sluice ...`, write inputs, read JSONL outputs and job files.
#pragma once

#include <cstdint>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/jobs/job_store.h"
#include "tests/support/process.h"
#include "tests/support/test_paths.h"

namespace sluice::test {

// The small model most CLI tests run (relative to ../shared).
inline constexpr const char* kGgufF32 = "models/stories260K/gguf/stories260K-f32.gguf";

inline ProcessResult run_sluice(std::vector<std::string> args) {
  args.insert(args.begin(), SLUICE_EXECUTABLE);
  return run_process(args, {"QT_QPA_PLATFORM=offscreen"});
}

// Writes jsonl as dir/input.jsonl and returns its path.
inline std::string write_input_jsonl(const std::string& dir, const std::string& jsonl) {
  write_file(dir + "/input.jsonl", jsonl);
  return dir + "/input.jsonl";
}

inline std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::vector<nlohmann::json> rows;
  const std::string content = read_file(path);
  size_t start = 0;
  while (start < content.size()) {
    const size_t end = content.find('\n', start);
    const std::string line =
        content.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!line.empty()) rows.push_back(nlohmann::json::parse(line));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return rows;
}

// Every field of an output row but its timings.
inline nlohmann::json without_timings(nlohmann::json row) {
  row.erase("timings");
  return row;
}

// The rows committed to the job file at job_path so far (0 while it does not exist yet).
inline int64_t committed_rows(const std::string& job_path) {
  try {
    return JobStore::open(job_path)->counts().done;
  } catch (const std::exception&) {
    return 0;  // not created yet
  }
}

}  // namespace sluice::test
