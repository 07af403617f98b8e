// What the status bar says when a run ends: the run as a whole (rows, failed, tokens, average
// and peak tokens/s, active time, preemptions) instead of the last instantaneous rate.
#pragma once

#include <QString>

#include "engine/engine_stats.h"

namespace sluice::ui {

class RunSummary final {
 public:
  // Forgets the last run.
  void clear() { *this = RunSummary(); }
  // Takes one statistics snapshot of the run (the job's own counters, see EngineWorker).
  void addStats(const sluice::StepStats& stats);

  qint64 generatedTokens() const { return m_generatedTokens; }
  double peakTokensPerS() const { return m_peakTokensPerS; }
  qint64 preemptions() const { return m_preemptions; }
  // Returns generated tokens per active second, or 0 before a second has passed.
  double averageTokensPerS(double activeS) const;

  // Returns the summary line: rowsDone of them failed and skipped, over activeS seconds
  // (pauses excluded; pausedS > 0 is named).
  QString describe(qint64 rowsDone, qint64 rowsFailed, qint64 rowsSkipped, double activeS,
                   double pausedS) const;

 private:
  qint64 m_generatedTokens = 0;
  qint64 m_preemptions = 0;
  double m_peakTokensPerS = 0.0;
};

}  // namespace sluice::ui
