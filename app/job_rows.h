// The rows a job records: one that ran, from its samples' finished requests; one recorded without
// running (skipped, or refused before it reached the service: every sample ends with "error").
#pragma once

#include <string>
#include <vector>

#include "app/generation_spec.h"
#include "engine/engine.h"
#include "engine/input/dataset_row.h"
#include "engine/input/prompt_builder.h"
#include "engine/jobs/row_result.h"

namespace sluice {

// Returns a sample as the job stores it (its output token ids only when with_token_ids).
SampleResult sample_from(const FinishedRequest& f, bool with_token_ids);

// Returns the row that ran with prompt and sampling: Done, or Failed with the first error a
// sample ended with; timings from the first sample. Precondition: samples holds every sample.
RowResult finished_row(const DatasetRow& row, const BuiltPrompt& prompt,
                       const SamplingParams& sampling, const std::vector<FinishedRequest>& samples,
                       bool with_token_ids);

// Returns a row recorded without running: its input and prompt, a status and why.
RowResult unrun_row(const DatasetRow& row, const BuiltPrompt& prompt, const GenerationSpec& spec,
                    RowStatus status, std::string error);

// Returns a row refused before it reaches the engine (its prompt cannot fit the context, its
// schema does not compile): it fails as a prompt the engine rejects does, every sample "error".
RowResult refused_row(const DatasetRow& row, const BuiltPrompt& prompt, const GenerationSpec& spec,
                      std::string error);

}  // namespace sluice
