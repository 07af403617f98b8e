// The pipeline's last step: the Hub-ready folder (engine/export/hub_folder.h: data/train.jsonl,
// data/train.parquet, README.md with the dataset card and its provenance), and beside it in the
// pipeline's folder the run report (report.html) and what the steps took out and why
// (removed.jsonl).
//
// The folder's bytes depend only on the rows and the description, never on timings or on which
// steps were cached, so a resumed run writes the same files as an uninterrupted one. The report
// tells this run's story (its model calls and seconds).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/pipeline/dataset_records.h"
#include "app/pipeline/model_step.h"
#include "app/pipeline/pipeline_description.h"
#include "engine/curate/run_report.h"

namespace sluice {

class JobStore;

// What the steps before the export found, for the card and the report.
struct ExportContext {
  const PipelineDescription* description = nullptr;
  std::string dir;  // the pipeline's folder
  std::string generate_job;
  std::string judge_job;  // "" without a judge step
  std::string model_sha256, judge_model_sha256;
  const std::vector<StepRun>* steps = nullptr;
  const Removals* removals = nullptr;
  const JobStore* generated = nullptr;
  std::vector<double> judge_scores;
  std::optional<double> position_agreement;
  int64_t judge_failures = 0;
  std::vector<ReportCluster> clusters;  // the dedup step's, largest first
};

// Writes the export folder (export_step.dir under the pipeline's folder, replacing its three
// files), report.html and removed.jsonl. Returns the folder. Throws Error naming a file
// that cannot be written.
std::string write_pipeline_export(const ExportContext& context, const ExportStep& export_step,
                                  const DatasetRecords& records);

}  // namespace sluice
