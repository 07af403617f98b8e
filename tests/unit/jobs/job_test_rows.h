// Hand-built job contents for the job store and export tests: each row's values are written out
// here, so tests compare what comes back against these, never against the code under test.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/jobs/job_info.h"
#include "engine/jobs/row_result.h"

namespace sluice::test {

inline JobInfo make_job_info(int n = 1) {
  JobInfo info;
  info.source_path = "/data/instructions.jsonl";
  info.source_sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  info.source_size_bytes = 12345;
  info.source_format = "jsonl";
  info.model_path = "/models/stories15M.bin";
  info.model_identity = "llama2c:stories15M";
  info.params = nlohmann::ordered_json::parse(
      R"({"temperature": 0.7, "top_p": 0.9, "max_tokens": 64, "seed": 42,
          "system_prompt": "Be brief.", "prompt_template": "{{instruction}}"})");
  info.params["n"] = n;
  return info;
}

inline SampleResult make_sample(std::string output, int output_tokens,
                                std::string finish_reason = "stop") {
  SampleResult sample;
  sample.output = std::move(output);
  sample.output_tokens = output_tokens;
  sample.finish_reason = std::move(finish_reason);
  return sample;
}

// A done row whose text exercises quoting and Unicode: commas, quotes, newlines, non-ASCII.
inline RowResult make_row(int64_t row_index) {
  RowResult row;
  row.row_index = row_index;
  row.line = static_cast<size_t>(row_index) + 1;
  row.status = RowStatus::Done;
  row.input = {{"instruction", "Say \"hi\", then\nstop #" + std::to_string(row_index)},
               {"input", "ünïcödé, 日本"},
               {"id", row_index * 10}};
  row.messages = {{"system", "Be brief."},
                  {"user", "Say \"hi\", then\nstop #" + std::to_string(row_index)}};
  row.prompt = "<s>[INST] Say \"hi\" #" + std::to_string(row_index) + " [/INST]";
  row.prompt_tokens = 17 + static_cast<int>(row_index);
  SampleResult sample = make_sample("Hi, \"there\"\r\nbye " + std::to_string(row_index), 9);
  sample.output_token_ids = {1, 2, 3, static_cast<int32_t>(row_index)};
  sample.extra = {{"score", 0.25}};
  row.samples = {sample};
  row.seed = 0xfedcba9876543210ULL + static_cast<uint64_t>(row_index);  // above INT64_MAX
  row.queue_ms = 1.5;
  row.ttft_ms = 20.25;
  row.total_ms = 100.125 + static_cast<double>(row_index);
  return row;
}

inline RowResult make_failed_row(int64_t row_index) {
  RowResult row;
  row.row_index = row_index;
  row.line = static_cast<size_t>(row_index) + 1;
  row.status = RowStatus::Failed;
  row.error = "prompt is 5000 tokens, longer than max_model_len 4096";
  row.input = {{"instruction", "too long"}};
  row.prompt = "too long";
  return row;
}

inline RowResult make_skipped_row(int64_t row_index) {
  RowResult row;
  row.row_index = row_index;
  row.line = static_cast<size_t>(row_index) + 1;
  row.status = RowStatus::Skipped;
  row.error = "line 3: not a JSON object";
  return row;
}

// Runs fn, expects it to throw Error, and returns the message.
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected sluice::Error";
  return {};
}

}  // namespace sluice::test
