// What the status bar says while a job runs: rows finished (failed, skipped) and the requests
// the engine (or the remote servers) is running and holding queued. The job admits far more
// rows than run at once (its admission window, e.g. 1,024 for 256 sequences), so the rows in
// flight are not what runs: running and queued come from the engine's own step statistics.
#pragma once

#include <QString>

#include "app/job_progress.h"
#include "engine/engine_stats.h"

namespace sluice::ui {

// Returns "1,234 rows done (5 failed, 0 skipped) · 256 running · 768 queued" for the job's
// counts and the latest step's running and waiting requests.
QString describeRunStatus(const sluice::JobProgress& progress, const sluice::StepStats& stats);

}  // namespace sluice::ui
