// `sluice bench schemas`: a folder of JSON Schemas in subsets (one subfolder each, as
// JSONSchemaBench ships them) measured the way jobs use them. Every schema is compiled through a
// GrammarCache (build_grammar, what a job runs) and timed; with a model, the first compiled
// schemas of each subset generate rows on the real engine, constrained to the schema, and each
// finished output is judged by the schema's full validator (OutputCheck). An output the grammar
// completed but the validator refuses is a soundness bug of the grammar and is kept to be shown.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/grammar/json_schema_grammar.h"
#include "engine/model_session.h"
#include "engine/sched/sampling_params.h"

namespace sluice::cli {

struct SchemaSubset {
  std::string name;                       // the subfolder's name
  std::vector<std::string> schema_paths;  // its *.json files, sorted
};

// Returns dir's subfolders that hold *.json files, sorted by name. Throws Error naming dir when
// it is not a folder or has no such subfolder.
std::vector<SchemaSubset> list_schema_subsets(const std::string& dir);

struct SchemaBenchSpec {
  SchemaMode schema_mode = SchemaMode::Strict;
  size_t max_generated_schemas = 20;  // per subset: the first compiled ones generate rows
  int rows_per_schema = 2;
  std::string prompt = "Write a JSON value.";
  SamplingParams sampling;  // temperature, seed, max_tokens (grammar is set per schema)
  EngineConfig engine;
  std::string device = "cpu";
  int num_threads = 0;
};

// An output the grammar accepted as complete and the schema's validator refused.
struct UnsoundOutput {
  std::string schema_path;
  std::string output;
  std::string reason;  // the validator's
};

// One subset under one whitespace mode.
struct SchemaSubsetResult {
  std::string subset;
  JsonWhitespace whitespace = JsonWhitespace::Flexible;
  size_t num_schemas = 0;
  size_t num_compiled = 0;
  std::vector<double> compile_ms;  // [num_compiled]
  // Generation (with a model):
  size_t num_generated_schemas = 0;
  size_t num_rows = 0;
  size_t num_valid = 0;       // by the full validator
  size_t num_max_tokens = 0;  // finished by max_tokens (or the context's end)
  size_t num_errors = 0;      // requests the engine failed (counted in num_rows, not valid)
  std::vector<float> mask_us;
  std::vector<UnsoundOutput> unsound;
};

// Compiles every schema of subset with whitespace and spec.schema_mode and times each compile;
// session non-null: then generates spec.rows_per_schema rows for each of the first
// spec.max_generated_schemas compiled schemas on a fresh engine. Never throws for a bad schema
// file (it is counted as not compiled; a file that is not JSON or cannot be read is named on
// stderr); throws Error when the engine cannot be built.
SchemaSubsetResult run_schema_subset(const SchemaSubset& subset, JsonWhitespace whitespace,
                                     const SchemaBenchSpec& spec, const ModelSession* session);

// Returns the q-quantile (0..1) of values by the nearest rank below; 0 for none.
double percentile(std::vector<double> values, double q);

}  // namespace sluice::cli
