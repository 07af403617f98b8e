// Builds engines over the stories260K model for engine tests and runs prompts to completion.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/engine.h"
#include "engine/input/column_template.h"
#include "engine/input/dataset_reader.h"
#include "engine/model_session.h"
#include "tests/support/test_paths.h"

namespace sluice::test {

struct StoriesModel {
  ModelSession session;

  explicit StoriesModel(
      const std::string& relative = "models/stories260K/gguf/stories260K-f32.gguf")
      : session(open_model_session(shared_path(relative), "")) {}

  std::unique_ptr<Engine> make_engine(const EngineConfig& config) const {
    return std::make_unique<Engine>(
        session.model->config, *session.tokenizer,
        std::make_unique<CpuBackend>(*session.model, CpuBackendOptions{.num_threads = 2}), config);
  }

  std::vector<int32_t> encode(const std::string& text) const {
    return session.tokenizer->encode(
        text, EncodeOptions{.add_bos = session.tokenizer->add_bos_default()});
  }
};

struct RunStats {
  int64_t num_preemptions = 0;
  int max_scheduled_requests = 0;
  int max_scheduled_tokens = 0;
  int64_t num_steps = 0;
};

// Adds every prompt (sample key = its index), steps until done, returns the outputs keyed by
// (prompt index, sample index).
// grammar: every prompt's compiled grammar (null: free text).
inline std::map<std::pair<size_t, uint32_t>, FinishedRequest> run_all(
    Engine& engine, const std::vector<std::vector<int32_t>>& prompts, const SamplingParams& params,
    RunStats* stats = nullptr, const std::shared_ptr<const Grammar>& grammar = nullptr) {
  std::map<RequestId, size_t> index_of;
  for (size_t i = 0; i < prompts.size(); ++i)
    index_of[engine.add_request(prompts[i], params, i, grammar)] = i;
  std::map<std::pair<size_t, uint32_t>, FinishedRequest> out;
  while (engine.has_unfinished()) {
    StepResult step = engine.step();
    if (stats) {
      stats->num_preemptions = step.stats.num_preemptions;
      stats->max_scheduled_requests =
          std::max(stats->max_scheduled_requests, step.stats.num_scheduled_requests);
      stats->max_scheduled_tokens =
          std::max(stats->max_scheduled_tokens, step.stats.num_scheduled_tokens);
      ++stats->num_steps;
    }
    for (auto& f : step.finished) out[{index_of.at(f.group_id), f.sample_idx}] = std::move(f);
  }
  return out;
}

// The first n instruction prompts of the Alpaca file.
inline std::vector<std::string> alpaca_prompts(size_t n) {
  std::vector<std::string> out;
  const auto tmpl = ColumnTemplate::parse("{instruction}[\n\n{input}]");
  auto reader = open_dataset(shared_path("datasets/en/alpaca_5000.json"));
  while (out.size() < n) {
    const auto row = reader->next();
    if (!row) break;
    out.push_back(tmpl.render(row->fields));
  }
  return out;
}

}  // namespace sluice::test
