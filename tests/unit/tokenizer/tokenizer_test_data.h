// Readers for the tokenizer reference data in ../shared used by several tokenizer tests:
// llama.cpp's vocab test strings (.inp) and expected ids (.out), and id lists in JSON files.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/test_paths.h"

namespace sluice::test {

// Returns the strings of a llama.cpp .inp file: each string is followed by the separator
// "\n__ggml_vocab_test__\n", the last one included, so the file ends with it.
inline std::vector<std::string> read_vocab_test_inputs(const std::string& path) {
  const std::string separator = "\n__ggml_vocab_test__\n";
  const std::string content = read_file(path);
  std::vector<std::string> inputs;
  size_t start = 0;
  for (size_t found; (found = content.find(separator, start)) != std::string::npos;) {
    inputs.push_back(content.substr(start, found - start));
    start = found + separator.size();
  }
  if (start != content.size()) throw std::runtime_error(path + ": does not end with a separator");
  return inputs;
}

// Returns the id lists of a llama.cpp .out file: one line per input, ids separated by spaces
// (an empty line for the empty string).
inline std::vector<std::vector<int32_t>> read_vocab_test_outputs(const std::string& path) {
  std::istringstream lines(read_file(path));
  std::vector<std::vector<int32_t>> outputs;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::vector<int32_t> ids;
    for (int32_t id; fields >> id;) ids.push_back(id);
    outputs.push_back(std::move(ids));
  }
  return outputs;
}

// Returns the integer array at key of a JSON file.
inline std::vector<int32_t> read_json_ids(const std::string& path, const std::string& key) {
  const auto json = nlohmann::json::parse(read_file(path));
  return json.at(key).get<std::vector<int32_t>>();
}

}  // namespace sluice::test
