// A job's rows as a Hugging Face Hub folder (hub_folder.h), for `sluice jobs export --format hub`:
// one record per sample of each row that has output (as the openai chat format: failed and
// skipped rows and rows without samples are left out and counted), columns
//
//   row_index (int64), sample_index (int64), prompt (string: the conversation's last user turn,
//   or the rendered prompt for a row without one), messages (Messages: the conversation, then
//   {"role": "assistant", "content": the answer}), reasoning (string, null when the sample has
//   none or ExportOptions::reasoning is keep or strip), finish_reason (string), output_tokens
//   (int64), model (string: the model file's name)
//
// and a card whose provenance holds the model file's name and identity, the source file's name,
// format and SHA-256, every generation parameter of the job, its creation time, the Sluice
// version and the rows written and left out. File names only: a card is published, and a path
// would show the author's folders.
#pragma once

#include <string>
#include <vector>

#include "engine/export/exporters.h"
#include "engine/export/hub_folder.h"
#include "engine/jobs/job_store.h"

namespace sluice {

struct HubExportStats {
  ExportStats rows;  // rows_written, records_written (one per sample), left_out
  HubFolderStats folder;
};

// The columns above, in order.
std::vector<ParquetColumn> hub_export_columns();

// Writes job's rows to dir as a Hub folder. options: reasoning and leave_out_invalid apply;
// overwrite as HubFolderOptions::overwrite. Throws Error naming the folder or row at fault.
HubExportStats export_job_hub(const JobStore& job, const std::string& dir,
                              const ExportOptions& options, bool overwrite = false);

}  // namespace sluice
