// The job of the results tests: row i's every value is a function of i (varied statuses,
// Unicode, long outputs, several samples), so a test computes what it expects from i, never by
// reading the job back through the code under test.
#pragma once

#include <QString>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/jobs/job_store.h"

namespace sluice::gui_test {

inline constexpr int kNumRows = 20'000;

inline RowStatus statusOf(int64_t i) {
  if (i % 17 == 5) return RowStatus::Failed;
  if (i % 29 == 11) return RowStatus::Skipped;
  return RowStatus::Done;
}

inline int outputTokensOf(int64_t i) {
  return 3 + static_cast<int>((i * 31) % 200);
}

inline double totalMsOf(int64_t i) {
  return 20.0 + static_cast<double>((i * 577) % 3000) * 0.25;
}

// Every value of row i, as written to the job.
inline RowResult makeRow(int64_t i) {
  RowResult row;
  row.row_index = i;
  row.line = static_cast<size_t>(i) + 1;
  row.status = statusOf(i);
  row.seed = 1000 + static_cast<uint64_t>(i);
  if (row.status == RowStatus::Skipped) {
    row.error = "line " + std::to_string(i + 1) + ": not a JSON object";
    return row;
  }
  if (i % 5 != 0) row.input["id"] = "q-" + std::to_string(i);
  row.input["question"] = "item " + std::to_string(i);
  row.prompt = "Question " + std::to_string(i) + ": " + (i % 11 == 0 ? "Ünïcödé ☃ 日本語 " : "") +
               "tell me about item " + std::to_string(i % 300) +
               (i % 733 == 7 ? " NEEDLEWORD" : "");
  row.prompt_tokens = 8 + static_cast<int>(i % 40);
  row.queue_ms = 2.0;
  row.ttft_ms = 10.0;
  row.total_ms = totalMsOf(i);
  if (row.status == RowStatus::Failed) {
    row.error = "row " + std::to_string(i) + " failed: the prompt is too long";
    return row;
  }
  SampleResult sample;
  sample.output = "Item " + std::to_string(i) + " is a fine thing. ";
  if (i % 97 == 0) {
    for (int k = 0; k < 200; ++k) sample.output += "Long output line " + std::to_string(k) + ".\n";
  }
  if (i % 401 == 3) sample.output += "It hides a NeedleWord. ";
  if (i % 13 == 0) sample.output += "Ünïcödé ☃ 日本語 🙂";
  sample.output_tokens = outputTokensOf(i);
  sample.finish_reason = i % 4 == 0 ? "length" : "stop";
  row.samples = {sample};
  if (i % 50 == 0) {
    SampleResult second;
    second.output = "second sample of row " + std::to_string(i);
    second.output_tokens = 6;
    second.finish_reason = "stop";
    row.samples.push_back(second);
  }
  return row;
}

inline JobInfo makeInfo() {
  JobInfo info;
  info.source_path = "/data/questions.jsonl";
  info.source_format = "jsonl";
  info.model_path = "/models/tiny.gguf";
  info.params["n"] = 1;
  return info;
}

inline void writeJob(const QString& path, const std::vector<int64_t>& indices) {
  auto store = JobStore::create(path.toStdString(), makeInfo());
  for (const int64_t i : indices) store->add_result(makeRow(i));
  store->flush();
}

inline std::vector<int64_t> range(int64_t first, int64_t end) {
  std::vector<int64_t> indices;
  for (int64_t i = first; i < end; ++i) indices.push_back(i);
  return indices;
}

inline int countRows(const std::function<bool(int64_t)>& keep) {
  int count = 0;
  for (int64_t i = 0; i < kNumRows; ++i) count += keep(i) ? 1 : 0;
  return count;
}

}  // namespace sluice::gui_test
