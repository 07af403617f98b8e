// The OpenAI Batch output format: one line per row in input order, {"id": "batch_req_...",
// "custom_id", "response": {"status_code": 200, "request_id", "body"}, "error": null}, or for a
// row that failed or was skipped, "response": null and "error": {"code", "message"}. The body
// (the chat.completion or text_completion object a server would return) is built by
// ExportOptions::batch_response_body, which the app supplies: the engine knows no HTTP shapes.
// It gets each row as row_for_export shows it under ExportOptions::reasoning, so under keep and
// strip its samples have no reasoning left to write.
#pragma once

#include <string>

#include "engine/export/exporters.h"

namespace sluice {

class ExportOutput;

// Returns the stable request id of row_index in the job whose info is job_info: the same in
// every export of the job (hex digits of a hash of the job's source, creation time and row).
std::string batch_request_id(const JobInfo& job_info, int64_t row_index);

// Returns the seconds since the epoch of an ISO 8601 UTC time ("2025-01-31T12:00:00Z"), or 0
// when text is not one.
int64_t epoch_seconds_of(const std::string& text);

// Writes job in the Batch output format, every readable row (failed and skipped rows with
// their errors). Throws Error when options has no batch_response_body.
ExportStats write_openai_batch_export(const JobStore& job, ExportOutput& out,
                                      const ExportOptions& options);

}  // namespace sluice
