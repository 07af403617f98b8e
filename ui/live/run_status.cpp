#include "ui/live/run_status.h"

#include <QObject>

#include "ui/common/number_format.h"

namespace sluice::ui {

QString describeRunStatus(const sluice::JobProgress& progress, const sluice::StepStats& stats) {
  return QObject::tr("%1 rows done (%2 failed, %3 skipped) · %4 running · %5 queued")
      .arg(formatCount(progress.job.finished()), formatCount(progress.job.failed),
           formatCount(progress.job.skipped), formatCount(stats.num_running),
           formatCount(stats.num_waiting));
}

}  // namespace sluice::ui
