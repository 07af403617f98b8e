// One run of a model over an instruction file: load, submit every row at once, step the engine
// until done, hand each finished row to the caller as it finishes. Used by `sluice generate`,
// the GUI's EngineWorker and the headless demo. Plain C++: the caller chooses the thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/data/prompt_rows.h"
#include "engine/engine.h"
#include "engine/model_session.h"

namespace sluice {

struct GenerationJobSpec {
  std::string model_path;
  std::string tokenizer_path;  // empty: the model's own
  std::string input_path;
  size_t limit = 0;  // 0: every row
  std::string device = "cpu";
  int num_threads = 0;
  bool with_token_ids = false;
  EngineConfig engine;
  SamplingParams sampling;
};

struct RowOutcome {
  size_t row_idx = 0;
  const PromptRow* row = nullptr;
  nlohmann::ordered_json json;  // the output row as written to JSONL
  bool has_error = false;
  std::string error;  // the first sample's error, when has_error
};

class GenerationJob {
 public:
  explicit GenerationJob(GenerationJobSpec spec);
  ~GenerationJob();

  // Reads the rows, loads the model and tokenizer, builds the engine. Throws Error/Cancelled.
  void load(const LoadOptions& load_options = {});

  // Submits every row and steps until all are done or *cancel becomes true (then the unfinished
  // rows are aborted and reported with finish_reason "abort"). on_row runs for each row as it
  // finishes; on_step after every step. Returns the number of rows that ended in an error.
  size_t run(const std::function<void(const RowOutcome&)>& on_row,
             const std::function<void(const StepStats&, size_t rows_done)>& on_step,
             const std::atomic<bool>* cancel = nullptr);

  const std::vector<PromptRow>& rows() const { return rows_; }
  // The output rows in input order (null for rows that never finished).
  const std::vector<nlohmann::ordered_json>& results() const { return results_; }
  const ModelSession& session() const { return session_; }
  const Engine& engine() const { return *engine_; }

 private:
  struct RowState {
    std::vector<FinishedRequest> samples;
    int num_finished = 0;
  };
  RowOutcome complete_row(size_t row_idx);

  GenerationJobSpec spec_;
  std::vector<PromptRow> rows_;
  ModelSession session_;
  std::unique_ptr<Engine> engine_;
  std::map<RequestId, size_t> row_of_;
  std::vector<RowState> row_states_;
  std::vector<nlohmann::ordered_json> results_;
};

// Serialises an output row as one JSONL line (invalid UTF-8 replaced, never thrown on).
std::string dump_jsonl_row(const nlohmann::ordered_json& row);

}  // namespace sluice
