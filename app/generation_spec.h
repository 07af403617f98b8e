// Everything that determines a generation run's outputs, kept in the job file so a resumed
// job runs exactly as it started (JSON round trip).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "app/remote/remote_spec.h"
#include "engine/engine.h"
#include "engine/grammar/grammar_source.h"
#include "engine/input/dataset_format.h"
#include "engine/input/prompt_builder.h"
#include "engine/sched/sampling_params.h"

namespace sluice {

enum class BadRowPolicy : uint8_t { Stop, Skip };

// A row whose prompt does not fit the context (max_model_len tokens or more): it fails (the
// engine refuses it), is recorded as skipped, or is truncated to its last tokens (the end of a
// prompt holds the question and the chat template's turn for the answer; the BOS token stays
// first). A truncated prompt keeps max(max_model_len / 2, max_model_len - max_tokens) tokens, at
// most max_model_len - 1, so the engine is only ever given prompts that fit.
enum class LongPromptPolicy : uint8_t { Fail, Skip, Truncate };

struct GenerationSpec {
  std::string model_path;
  std::string tokenizer_path;  // empty: the model's own
  std::string input_path;
  DatasetFormat format = DatasetFormat::Auto;
  PromptOptions prompt;
  size_t limit = 0;  // 0: every row
  BadRowPolicy on_bad_row = BadRowPolicy::Stop;
  LongPromptPolicy on_long_prompt = LongPromptPolicy::Fail;
  bool with_token_ids = false;
  EngineConfig engine;
  // sampling.grammar: the source that constrains every output (null: free text), stored as it
  // is so a resumed job compiles the same grammar; the service that runs the rows compiles it.
  SamplingParams sampling;
  // Each row's output follows the JSON Schema in this field of the row (app/row_schemas.h);
  // "" for none. Exclusive with sampling.grammar.
  std::string schema_column;
  // The options of every JSON grammar the job compiles: its own (already applied to
  // sampling.grammar), each row's schema and each batch line's response_format (a line's own
  // schema_mode / json_whitespace win). Stored only when not the defaults.
  JsonGrammarOptions json_grammar;
  // Where the run happens; not part of what determines outputs on the CPU.
  std::string device = "cpu";
  int num_threads = 0;
  // Remote servers instead of a local model (model_path is then ""): the prompt goes to them as
  // chat messages (or as plain text with use_chat_template false) and they apply their own
  // chat template.
  RemoteSpec remote;
};

// The parameters that determine outputs, as stored in a job.
nlohmann::ordered_json spec_to_json(const GenerationSpec& spec);
// Rebuilds a spec from spec_to_json's output; throws Error naming a missing or bad key.
GenerationSpec spec_from_json(const nlohmann::ordered_json& json);

// "stop" or "skip".
const char* to_string(BadRowPolicy policy);
BadRowPolicy parse_bad_row_policy(const std::string& name);
// "fail", "skip" or "truncate".
const char* to_string(LongPromptPolicy policy);
LongPromptPolicy parse_long_prompt_policy(const std::string& name);
// Returns how many tokens a truncated prompt keeps (see LongPromptPolicy).
int truncated_prompt_tokens(int max_model_len, int max_tokens);
// Returns how many of a job's rows are in its service at once: enough to keep every batch slot
// (or every remote request slot) busy, bounded so a huge file costs memory for its in-flight rows
// only. A local job's own engine service queues this many.
size_t job_window_size(const GenerationSpec& spec);

}  // namespace sluice
