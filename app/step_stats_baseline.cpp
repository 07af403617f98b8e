#include "app/step_stats_baseline.h"

#include <algorithm>

namespace sluice {

StepStatsBaseline::StepStatsBaseline(const StepStats& before) : m_before(before) {
  m_sinceStart.start();
}

StepStats StepStatsBaseline::rebase(const StepStats& stats) {
  if (!m_clockOffsetS) m_clockOffsetS = stats.elapsed_s - m_sinceStart.elapsed() / 1000.0;
  StepStats rebased = stats;
  rebased.elapsed_s = std::max(0.0, stats.elapsed_s - *m_clockOffsetS);
  rebased.total_prompt_tokens -= m_before.total_prompt_tokens;
  rebased.total_generation_tokens -= m_before.total_generation_tokens;
  rebased.num_preemptions -= m_before.num_preemptions;
  rebased.num_finished -= m_before.num_finished;
  return rebased;
}

}  // namespace sluice
