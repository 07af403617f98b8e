// The judge step's data: the instruction file of judge prompts built from the generated rows (one
// line per judgement asked: a sample rated alone, or two samples compared in one order), and the
// judge's answers folded back into the generated rows as each sample's score and rationale
// (SampleResult::extra: "score", and "judge" with the rubric, every rating and rationale), where
// the Pairs tab shows them and `jobs export --dpo-rule score` ranks by them.
//
// The judging itself is a generation job over that file (its own job file in the pipeline's
// folder), so it resumes after kill -9 like any job: no judgement is asked twice.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/pipeline/pipeline_description.h"

namespace sluice {

class JobStore;

// Writes the judge's instruction file for the generated rows (JSONL; each line a "prompt" and
// the judgement's "row", "sample", and for a comparison "other" and "order" ("AB": sample shown as
// A; "BA": other shown as A)), appearing at path only complete. A row's samples that ended in an
// error or abort are not judged; a comparison needs two judged samples. Returns the line count.
int64_t write_judge_input(const JobStore& generated, const JudgeStep& judge,
                          const std::string& path);

// What the judge said, per generated row and sample.
struct Judgements {
  // row index -> per sample: the extra to store ({"score": mean, "judge": {...}}), or null for a
  // sample that was not judged (or whose every judgement failed).
  std::map<int64_t, std::vector<nlohmann::ordered_json>> extras;
  int64_t num_asked = 0;       // judge samples read (lines x k)
  int64_t num_failed = 0;      // of which did not parse (cut off, ...)
  std::vector<double> scores;  // every judged sample's score
  // Comparisons only: the share of (pair, judge sample) whose two orders agree.
  std::optional<double> position_agreement;
};

// Reads the judge job's rows into judgements of the generated rows.
Judgements read_judgements(const JobStore& judge_job, const JudgeStep& judge);

// Stores each judged sample's extra in the generated job (replacing the "score" and "judge" keys
// of an earlier judge, keeping the rest); samples not judged lose both keys. Rewrites only rows
// that change.
void apply_judgements(JobStore& generated, const Judgements& judgements);

}  // namespace sluice
