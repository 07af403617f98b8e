// Helpers for the dataset tests: read a whole file the way a job does (skipping bad rows and
// keeping their errors) and write small files for edge cases.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/input/dataset_reader.h"
#include "tests/support/test_paths.h"

namespace sluice::test {

struct ReadOutcome {
  std::vector<DatasetRow> rows;
  std::vector<DatasetRowError> row_errors;
  std::optional<std::string> fatal_error;  // the plain Error that ended reading, if any
  DatasetFormat format = DatasetFormat::Auto;
};

// Reads every row of path, as a job would: row errors are kept and skipped, a fatal error ends
// reading. Also checks that progress() never goes backwards and ends at 1 on a clean read.
inline ReadOutcome read_all(const std::string& path, DatasetFormat format = DatasetFormat::Auto) {
  ReadOutcome outcome;
  const auto reader = open_dataset(path, format);
  outcome.format = reader->format();
  double last_progress = reader->progress();
  // A reader that never advances would loop forever; no test file has this many rows.
  for (int i = 0; i < 1'000'000; ++i) {
    try {
      auto row = reader->next();
      if (!row) break;
      outcome.rows.push_back(std::move(*row));
    } catch (const DatasetRowError& e) {
      outcome.row_errors.push_back(e);
    } catch (const Error& e) {
      outcome.fatal_error = e.what();
      break;
    }
    EXPECT_GE(reader->progress(), last_progress) << path << ": progress() went backwards";
    last_progress = reader->progress();
  }
  if (!outcome.fatal_error) {
    EXPECT_EQ(reader->progress(), 1.0) << path;
  }
  return outcome;
}

// Writes content to a file named name in a fresh temp directory and returns its path.
inline std::string write_temp_file(const std::string& name, const std::string& content) {
  const std::string path = make_temp_dir("data") + "/" + name;
  write_file(path, content);
  return path;
}

}  // namespace sluice::test
