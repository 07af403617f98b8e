// The jsonl export: one JSON object per row with every stored field (key order in exporters.h).
#pragma once

#include <nlohmann/json.hpp>

#include "engine/export/exporters.h"
#include "engine/jobs/row_result.h"

namespace sluice {

class ExportOutput;

// Returns row as the jsonl record; is_flat selects the n = 1 shape (output, ... at top level).
nlohmann::ordered_json jsonl_record(const RowResult& row, bool is_flat);

// Writes job as jsonl to out and returns the counts.
ExportStats write_jsonl_export(const JobStore& job, ExportOutput& out,
                               const ExportOptions& options);

}  // namespace sluice
