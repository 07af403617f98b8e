// Helpers for CLI tests: run `sluice ...`, write inputs, read JSONL outputs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/test_paths.h"

namespace sluice::test {

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

}  // namespace sluice::test
