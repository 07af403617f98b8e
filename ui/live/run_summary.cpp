#include "ui/live/run_summary.h"

#include <QObject>
#include <algorithm>

#include "ui/common/number_format.h"
#include "ui/live/run_progress.h"

namespace sluice::ui {

void RunSummary::addStats(const sluice::StepStats& stats) {
  m_generatedTokens = std::max<qint64>(m_generatedTokens, stats.total_generation_tokens);
  m_preemptions = std::max<qint64>(m_preemptions, stats.num_preemptions);
  m_peakTokensPerS = std::max(m_peakTokensPerS, stats.generation_tokens_per_s);
}

double RunSummary::averageTokensPerS(double activeS) const {
  return activeS >= 1.0 ? m_generatedTokens / activeS : 0.0;
}

QString RunSummary::describe(qint64 rowsDone, qint64 rowsFailed, qint64 rowsSkipped, double activeS,
                             double pausedS) const {
  QString text =
      QObject::tr(
          "%1 rows (%2 failed, %3 skipped) · %4 tokens · %5 tok/s average, "
          "%6 peak · %7")
          .arg(formatCount(rowsDone), formatCount(rowsFailed), formatCount(rowsSkipped),
               formatCount(m_generatedTokens), formatDecimal(averageTokensPerS(activeS), 1),
               formatDecimal(m_peakTokensPerS, 1), formatDuration(activeS));
  if (pausedS >= 1.0) text += QObject::tr(" (paused %1)").arg(formatDuration(pausedS));
  text += m_preemptions == 1 ? QObject::tr(" · 1 preemption")
                             : QObject::tr(" · %1 preemptions").arg(formatCount(m_preemptions));
  return text;
}

}  // namespace sluice::ui
