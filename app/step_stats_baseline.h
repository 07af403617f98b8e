// Rebases an engine service's StepStats to a series of the app's own: a job, or the server's
// traffic between jobs. The service is kept across jobs, so its clock and counters run on from
// its start; the plots want time since the series started and tokens, preemptions and finished
// requests counted during it.
#pragma once

#include <QElapsedTimer>
#include <optional>

#include "engine/engine_stats.h"

namespace sluice {

class StepStatsBaseline {
 public:
  // before: the service's latest StepStats when the series starts (its counters so far).
  explicit StepStatsBaseline(const StepStats& before);

  // Returns stats with elapsed_s since the series started and counters since then. The first
  // call fixes the service's clock against the wall clock of the series' start.
  StepStats rebase(const StepStats& stats);
  // Returns the seconds since the series started, on the clock of rebase's elapsed_s.
  double elapsedS() const { return m_sinceStart.elapsed() / 1000.0; }

 private:
  StepStats m_before;
  QElapsedTimer m_sinceStart;
  std::optional<double> m_clockOffsetS;  // the service's clock when the series started
};

}  // namespace sluice
