// Runs a pipeline description in its folder, step by step, each under its cache key:
//
//   DIR/steps/generate-<key>.sluicejob    the generation (a regular job: `sluice jobs show` it)
//   DIR/steps/judge-<key>.jsonl           the judge's instruction file, built from the rows
//   DIR/steps/judge-<key>.sluicejob       the judging
//   DIR/steps/filter-<key>.json           the filter's removals, with reasons
//   DIR/steps/dedup-<key>.json            the dedup's removals, with reasons and clusters
//   DIR/<export dir>/                     the Hub-ready folder (data/*.jsonl, data/*.parquet,
//                                         README.md dataset card)
//   DIR/report.html, DIR/removed.jsonl, DIR/run.json   this run's report, what was taken out
//                                         and why, and the steps' figures as JSON
//
// A step whose results are under its key is not run again; a model step whose job file is there
// but unfinished (a kill -9) resumes it. Everything written appears only complete. The steps'
// files stay when a key changes, so going back to an earlier setting costs nothing either. The
// judge's scores are also kept in the generation job's samples (judge_step.h) for the Pairs tab;
// a person's decisions there win over the judge in the export.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "app/pipeline/model_step.h"
#include "app/pipeline/pipeline_description.h"

namespace sluice {

class ModelHost;

struct PipelineEvents {
  // A step starts (its name and position) or finishes (its figures).
  std::function<void(const PipelineStep&, size_t index)> on_step_start;
  std::function<void(const StepRun&)> on_step_done;
  std::function<void(const std::string& text)> on_note;
  // A model step's progress.
  std::function<void(const std::string& step, const StepStats&, const JobProgress&)> on_progress;
};

struct PipelineResult {
  std::vector<StepRun> steps;
  bool is_cancelled = false;
  std::string generate_job;  // the generation's job file (the Pairs tab's)
  std::string export_dir;    // "" without an export step
  std::string report_path;
  int64_t rows_exported = 0;
  int64_t pairs_by_judge = 0, pairs_by_review = 0;
  int64_t judge_failures = 0;  // judge answers that did not read as the rubric's JSON
};

// The pipeline's files for description in dir.
class PipelineRunner {
 public:
  PipelineRunner(PipelineDescription description, std::string dir, ModelHost& host);

  // Runs every step (cached ones are only read). Returns with is_cancelled once *cancel is set
  // (a model step stops at its next commit; what it finished is kept). Throws Error naming the
  // step and file.
  PipelineResult run(const PipelineEvents& events, const std::atomic<bool>* cancel = nullptr);

  const std::string& dir() const { return dir_; }

 private:
  std::string steps_path(const std::string& name, const std::string& key,
                         const std::string& extension) const;
  std::string digest(const std::string& path) const;

  PipelineDescription description_;
  std::string dir_;
  ModelHost& host_;
};

}  // namespace sluice
