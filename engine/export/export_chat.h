// The fine-tuning formats built around a conversation: Alpaca, OpenAI chat and ShareGPT. Each
// takes done rows only; shapes are described in exporters.h.
#pragma once

#include "engine/export/exporters.h"

namespace sluice {

class ExportOutput;

// Writes job as an Alpaca JSON array ({instruction, input, output}, output = sample 0).
ExportStats write_alpaca_export(const JobStore& job, ExportOutput& out,
                                const ExportOptions& options);

// Writes job as OpenAI chat fine-tuning JSONL, one line per sample.
ExportStats write_openai_chat_export(const JobStore& job, ExportOutput& out,
                                     const ExportOptions& options);

// Writes job as a ShareGPT JSON array, one element per sample.
ExportStats write_sharegpt_export(const JobStore& job, ExportOutput& out,
                                  const ExportOptions& options);

}  // namespace sluice
