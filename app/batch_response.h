// The response body of one batch line as `sluice serve` would have answered it: a
// chat.completion or text_completion object (by the line's url) with every sample as a choice
// and usage, for the openai-batch export (ExportOptions::batch_response_body).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/export/exporters.h"
#include "engine/jobs/row_result.h"

namespace sluice {

// Returns the body for a done row: id "chatcmpl-<request_id>" or "cmpl-<request_id>", created,
// model (the line's body's), choices (one per sample, logprobs null) and usage (the prompt's
// tokens once, the samples' output tokens summed). A sample's reasoning goes, for chat, in its
// message's reasoning_content and reasoning beside content; for a text completion, before the
// answer in the text (output_with_reasoning); usage then has completion_tokens_details
// {reasoning_tokens}. The openai-batch export gives rows under keep and strip without reasoning.
nlohmann::json batch_response_body(const RowResult& row, const std::string& request_id,
                                   int64_t created);

// Returns options with batch_response_body set to the function above.
ExportOptions with_batch_responses(ExportOptions options);

}  // namespace sluice
