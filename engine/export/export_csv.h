// The csv export (RFC 4180): one row per result, the input's fields as columns. Two passes over
// the job: the first collects the columns (the union of the input fields, the most samples and,
// with flatten_output, the outputs' keys).
#pragma once

#include <string>
#include <string_view>

#include "engine/export/exporters.h"

namespace sluice {

class ExportOutput;

// Returns field as one RFC 4180 field: valid UTF-8, quoted (with quotes doubled) when it holds a
// comma, a quote, CR or LF.
std::string csv_field(std::string_view field);

// Writes job as csv to out and returns the counts.
ExportStats write_csv_export(const JobStore& job, ExportOutput& out, const ExportOptions& options);

}  // namespace sluice
