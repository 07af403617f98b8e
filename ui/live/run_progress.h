// What the run's progress bar and status line say: rows finished of rows total (rows a resumed
// job already held count as finished), the time the run has been active (pauses excluded) and
// an ETA from the recent finish rate: the rows finished over the last kRateWindowS seconds of
// activity, so neither the start-up nor a resume's rows skew it. The ETA is unknown (-1) until
// the total and a rate are known. Times are seconds on any monotonic clock the caller chooses.
#pragma once

#include <QtGlobal>
#include <deque>

namespace sluice::ui {

class RunProgress final {
 public:
  static constexpr double kRateWindowS = 30.0;
  // A rate needs finishes spread over at least this much activity.
  static constexpr double kMinRateSpanS = 3.0;

  // Starts a run at nowS: nothing finished, nothing known.
  void start(double nowS);
  // Pauses or resumes the clock at nowS (repeats are ignored).
  void setPaused(bool paused, double nowS);
  // Takes the job's counts at nowS: rowsFinished this run, rowsResumed found done in the job,
  // rowsTotal the rows of the whole job or -1 while unknown.
  void update(double nowS, qint64 rowsFinished, qint64 rowsResumed, qint64 rowsTotal);

  // Returns the seconds the run has been active up to nowS, pauses excluded.
  double activeSeconds(double nowS) const;
  // Returns the rows finished, resumed ones included.
  qint64 rowsDone() const { return m_rowsFinished + m_rowsResumed; }
  // Returns the rows of the whole job, or -1 while unknown.
  qint64 rowsTotal() const { return m_rowsTotal; }
  // Returns rowsDone() / rowsTotal() in [0, 1], or -1 while the total is unknown.
  double fraction() const;
  // Returns rows finished per active second over the recent window, or -1 while unknown.
  double finishRate() const;
  // Returns the active seconds left at the recent finish rate, or -1 while unknown.
  double etaSeconds() const;

 private:
  struct Sample {
    double activeS;
    qint64 rowsFinished;
  };
  // Finishes by active time: every change of the count within the window, and the last one
  // before it.
  std::deque<Sample> m_window;
  double m_nowActiveS = 0.0;  // at the last update
  double m_activeBeforePauseS = 0.0;
  double m_resumedAtS = 0.0;  // when the clock last started running
  bool m_paused = false;
  qint64 m_rowsFinished = 0;
  qint64 m_rowsResumed = 0;
  qint64 m_rowsTotal = -1;
};

// Formats seconds as m:ss or h:mm:ss; "—" when negative or not finite (unknown).
QString formatDuration(double seconds);

}  // namespace sluice::ui
