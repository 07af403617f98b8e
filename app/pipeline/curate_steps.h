// The steps that take rows out without a model call: the filter (each sample's answer by its
// length and refusal phrases) and dedup (each row's prompt, or first kept answer, against the
// others: exact and near duplicates; and against a user's evaluation file: 13-gram overlap).
// Their verdicts are kept in a JSON file under the step's key; when that file is there, it is
// read instead of computed again.
#pragma once

#include <string>
#include <vector>

#include "app/pipeline/dataset_records.h"
#include "app/pipeline/model_step.h"
#include "app/pipeline/pipeline_description.h"
#include "engine/curate/run_report.h"

namespace sluice {

class JobStore;

// Adds the filter's removals (samples) to removals, computing them into path or reading them
// from it. Fills run's counts (samples in, samples kept).
void run_filter_step(const FilterStep& filter, const JobStore& generated, const std::string& path,
                     Removals& removals, StepRun& run);

// Adds the dedup step's removals (rows, with reasons and clusters) to removals, computing them
// into path or reading them from it; clusters gets the duplicate clusters, largest first. Rows
// whose every sample the filter removed take no part. Fills run's counts (rows in, rows kept).
void run_dedup_step(const DedupStep& dedup, const JobStore& generated, const std::string& path,
                    Removals& removals, std::vector<ReportCluster>& clusters, StepRun& run);

// The texts of an evaluation file to decontaminate against: JSONL or a JSON array (each record's
// string fields, joined), or plain text (one text per non-empty line). Throws Error naming the
// file and line.
std::vector<std::string> read_evaluation_texts(const std::string& path);

}  // namespace sluice
