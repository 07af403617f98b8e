// Everything that determines a generation run's outputs, kept in the job file so a resumed
// job runs exactly as it started (JSON round trip).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/data/dataset_format.h"
#include "engine/data/prompt_builder.h"
#include "engine/engine.h"
#include "engine/grammar/grammar_source.h"
#include "engine/sched/sampling_params.h"

namespace sluice {

enum class BadRowPolicy : uint8_t { Stop, Skip };

struct GenerationSpec {
  std::string model_path;
  std::string tokenizer_path;  // empty: the model's own
  std::string input_path;
  DatasetFormat format = DatasetFormat::Auto;
  PromptOptions prompt;
  size_t limit = 0;            // 0: every row
  BadRowPolicy on_bad_row = BadRowPolicy::Stop;
  bool with_token_ids = false;
  EngineConfig engine;
  SamplingParams sampling;               // sampling.grammar is built from grammar
  std::optional<GrammarSource> grammar;  // constrains every output (none: free text)
  // Each row's output follows the JSON Schema in this field of the row (app/row_schemas.h);
  // "" for none. Exclusive with grammar.
  std::string schema_column;
  // Where the run happens; not part of what determines outputs on the CPU.
  std::string device = "cpu";
  int num_threads = 0;
};

// The parameters that determine outputs, as stored in a job.
nlohmann::ordered_json spec_to_json(const GenerationSpec& spec);
// Rebuilds a spec from spec_to_json's output; throws Error naming a missing or bad key.
GenerationSpec spec_from_json(const nlohmann::ordered_json& json);

// "stop" or "skip".
const char* to_string(BadRowPolicy policy);
BadRowPolicy parse_bad_row_policy(const std::string& name);

}  // namespace sluice
