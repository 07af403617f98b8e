// A pipeline step that calls a model — the generation, or the judge over its own instruction
// file — run as a generation job in its own job file: created, resumed after a kill, or, when the
// file already holds every row, not run at all (no model is loaded).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "app/generation_spec.h"
#include "app/job_progress.h"
#include "engine/engine_stats.h"

namespace sluice {

class ModelHost;

// What one step did in this run.
struct StepRun {
  std::string name;         // "generate", "judge", ...
  std::string key;          // its cache key
  bool was_cached = false;  // its results were there: nothing ran
  int64_t rows_in = 0, rows_out = 0;
  int64_t model_calls = 0;  // samples generated in this run
  int64_t prompt_tokens = 0, generated_tokens = 0;
  double seconds = 0.0;
  std::string note;  // e.g. "3 rows removed: refusal 2, under min_words 1"
};

struct ModelStepEvents {
  std::function<void(const std::string& text)> on_note;
  std::function<void(const StepStats&, const JobProgress&)> on_progress;
};

// Where a model step's job keeps what its model was (file, format, architecture, weight types,
// tokenizer, chat template digest; JSON), written when the step runs.
std::string model_facts_path(const std::string& job_path);

// Returns true when the job at job_path holds a finished result for every row of its input.
bool is_job_complete(const std::string& job_path);

// Runs spec's rows into the job at job_path (creating it, or resuming what a killed run left),
// counting this run's calls and tokens into run. Returns false when cancelled. Throws Error when a
// bad row stops the job or the model cannot run.
bool run_model_step(const GenerationSpec& spec, const std::string& job_path, ModelHost& host,
                    const ModelStepEvents& events, const std::atomic<bool>* cancel, StepRun& run);

}  // namespace sluice
