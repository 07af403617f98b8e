// Helpers for the tests of jobs and the model host: a short job on stories260K, and lending a
// job what it runs on as `sluice generate` does (a model host of its own; the lease keeps the
// service alive after the host has gone).
#pragma once

#include <string>

#include "app/generation_job.h"
#include "app/model_host.h"
#include "tests/unit/engine/engine_test_util.h"

namespace sluice::test {

// A spec over the first num_rows Alpaca prompts (written to dir/input.jsonl), greedy and short
// so a row takes milliseconds.
inline GenerationSpec stories_spec(const std::string& dir, size_t num_rows) {
  std::string jsonl;
  for (const std::string& prompt : alpaca_prompts(num_rows))
    jsonl += nlohmann::json{{"prompt", prompt}}.dump() + "\n";
  write_file(dir + "/input.jsonl", jsonl);
  GenerationSpec spec;
  spec.model_path = shared_path("models/stories260K/gguf/stories260K-f32.gguf");
  spec.input_path = dir + "/input.jsonl";
  spec.sampling.max_tokens = 12;
  spec.engine.max_num_seqs = 16;
  spec.num_threads = 1;
  return spec;
}

inline ServiceLease lend_alone(const GenerationSpec& spec) {
  return ModelHost().lend_for_job(spec);
}

}  // namespace sluice::test
