#include "ui/live/run_progress.h"

#include <QString>
#include <algorithm>
#include <cmath>

namespace sluice::ui {

void RunProgress::start(double nowS) {
  *this = RunProgress();
  m_resumedAtS = nowS;
  m_window.push_back({0.0, 0});
}

void RunProgress::setPaused(bool paused, double nowS) {
  if (paused == m_paused) return;
  if (paused)
    m_activeBeforePauseS += nowS - m_resumedAtS;
  else
    m_resumedAtS = nowS;
  m_paused = paused;
}

double RunProgress::activeSeconds(double nowS) const {
  return m_activeBeforePauseS + (m_paused ? 0.0 : nowS - m_resumedAtS);
}

void RunProgress::update(double nowS, qint64 rowsFinished, qint64 rowsResumed, qint64 rowsTotal) {
  m_nowActiveS = activeSeconds(nowS);
  if (rowsFinished != m_rowsFinished) m_window.push_back({m_nowActiveS, rowsFinished});
  // Keep the last sample at or before the window's start: the rows finished then are known.
  while (m_window.size() > 1 && m_window[1].activeS <= m_nowActiveS - kRateWindowS)
    m_window.pop_front();
  m_rowsFinished = rowsFinished;
  m_rowsResumed = rowsResumed;
  if (rowsTotal >= 0) m_rowsTotal = rowsTotal;
}

double RunProgress::fraction() const {
  if (m_rowsTotal < 0) return -1.0;
  if (m_rowsTotal == 0) return 1.0;
  return std::clamp(static_cast<double>(rowsDone()) / m_rowsTotal, 0.0, 1.0);
}

double RunProgress::finishRate() const {
  if (m_window.empty()) return -1.0;
  const Sample& first = m_window.front();
  const double spanS = m_nowActiveS - std::max(first.activeS, m_nowActiveS - kRateWindowS);
  const qint64 rows = m_rowsFinished - first.rowsFinished;
  if (spanS < kMinRateSpanS || rows <= 0) return -1.0;
  return rows / spanS;
}

double RunProgress::etaSeconds() const {
  if (m_rowsTotal < 0) return -1.0;
  const qint64 left = std::max<qint64>(0, m_rowsTotal - rowsDone());
  if (left == 0) return 0.0;
  const double rate = finishRate();
  return rate > 0.0 ? left / rate : -1.0;
}

QString formatDuration(double seconds) {
  if (seconds < 0 || !std::isfinite(seconds)) return QStringLiteral("—");
  const qint64 s = static_cast<qint64>(seconds + 0.5);
  return s >= 3600 ? QString("%1:%2:%3")
                         .arg(s / 3600)
                         .arg(s / 60 % 60, 2, 10, QChar('0'))
                         .arg(s % 60, 2, 10, QChar('0'))
                   : QString("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
}

}  // namespace sluice::ui
