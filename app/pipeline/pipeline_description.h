// A multi-step job's description: the file a person writes (JSON, or YAML: yaml_subset.h) naming
// the steps over the same rows — generate, judge, filter, dedup, export — and their options.
// `sluice pipeline run FILE` runs it; each step's results are kept in the pipeline's folder under
// the step's cache key (step_key.h), so running the file again runs only the steps whose inputs
// changed.
//
//   {"name": "helpful-dpo",
//    "steps": [
//      {"step": "generate", "options": {"model": "m.gguf", "input": "prompts.jsonl", "n": 4,
//                                       "temperature": 0.8, "max-tokens": 256, "seed": 7}},
//      {"step": "judge", "rubric": "ultrafeedback", "k": 1, "options": {"max-tokens": 200},
//       "pairs": {"rule": "best_vs_worst", "min_margin": 1, "drop_ties": true}},
//      {"step": "filter", "min_words": 3, "refusals": true, "patterns": ["as a language model"]},
//      {"step": "dedup", "field": "prompt", "threshold": 0.8, "decontaminate": "eval.jsonl"},
//      {"step": "export", "dir": "dataset", "license": "apache-2.0"}]}
//
// A generate or judge step's "options" are `sluice generate`'s options without the dashes
// (values: a string or number; true for a flag; a list for a repeated option such as stop), so
// every generation option means what it means there; paths are relative to the description
// file. A judge step without "model" or "endpoint" judges with the generate step's model.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/generation_spec.h"

namespace sluice {

class GrammarCache;

enum class StepKind : uint8_t { Generate, Judge, Filter, Dedup, Export };

// "generate", "judge", "filter", "dedup" or "export".
const char* to_string(StepKind kind);

// How a judge rates: each sample alone on a 1-5 scale with a rationale (UltraFeedback's overall
// rating), or two samples of a row side by side, in both orders (A/B then B/A) so that a judge
// that prefers a position cancels out.
enum class JudgeRubric : uint8_t { Ultrafeedback, Pairwise };

// How a row's judged samples become one DPO pair.
enum class PairRule : uint8_t {
  BestVsWorst,   // the highest score chosen, the lowest rejected
  BestVsRandom,  // the highest chosen, a seeded random other sample rejected
};

struct PairOptions {
  PairRule rule = PairRule::BestVsWorst;
  double min_margin = 0.0;  // leave out pairs whose scores differ by less
  bool drop_ties = true;    // leave out pairs of equal scores
  uint64_t seed = 0;        // BestVsRandom's choice, per row
};

struct JudgeStep {
  JudgeRubric rubric = JudgeRubric::Ultrafeedback;
  int k = 1;                  // judge samples per judgement, their ratings averaged
  int rationale_chars = 600;  // the rationale's maxLength in the judge's JSON schema
  std::string instructions;   // replaces the rubric's wording ("" keeps the built-in one)
  GenerationSpec spec;        // the judge's model and sampling (input and grammar set per run)
  PairOptions pairs;          // used by the export; not part of the judge's cache key
};

struct FilterStep {
  int min_words = 0, max_words = 0, min_chars = 0, max_chars = 0;  // 0: no bound
  bool default_refusals = true;                                    // the built-in refusal phrases
  std::vector<std::string> patterns;  // more refusal phrases (case-insensitive substrings)
};

struct DedupStep {
  std::string field = "prompt";  // what is compared: "prompt" or "output" (each row's first kept)
  bool exact = true;
  bool near = true;
  double threshold = 0.8;
  int num_permutations = 128;
  int shingle_words = 5;
  std::string decontaminate;  // an evaluation file (JSONL, JSON array or text), "" for none
  int contamination_ngram = 13;
};

struct ExportStep {
  std::string dir = "dataset";  // relative to the pipeline's folder
  std::string license = "other";
  std::string pretty_name;  // "" : the description's name
};

struct PipelineStep {
  StepKind kind = StepKind::Generate;
  std::string name;               // "generate", "judge", ... (unique)
  nlohmann::ordered_json source;  // the step as written (for the cache key and the card)
  GenerationSpec generate;        // Generate
  JudgeStep judge;
  FilterStep filter;
  DedupStep dedup;
  ExportStep export_step;
};

struct PipelineDescription {
  std::string path;  // the file
  std::string text;  // the file as written (kept with the dataset's provenance)
  std::string name;
  std::vector<PipelineStep> steps;

  // The step of kind, or null.
  const PipelineStep* find(StepKind kind) const;
};

// Reads the description at path. Throws Error naming the file and the step or key that is wrong
// (an unknown key, a bad value, a judge before a generate, two generate steps, ...).
PipelineDescription read_pipeline_description(const std::string& path, GrammarCache& grammars);
// The same from text, paths resolved against base_dir.
PipelineDescription parse_pipeline_description(const std::string& text, const std::string& path,
                                               GrammarCache& grammars);

}  // namespace sluice
