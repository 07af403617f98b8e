// Live plots of a run, a 2x2 grid of QCustomPlots sharing one time axis (seconds since the engine
// started): throughput, batch occupancy, KV blocks and memory. Fed with value snapshots about ten
// times a second for hours, so each graph keeps a bounded, decimated history (SeriesHistory) and
// replots are queued (coalesced into one per event-loop turn).
//
// The tokens/s axis always covers the highest visible value (a start-up burst included: the axis
// shows real peaks, rescaled at each replot); "waiting" is the job's backlog (rows not finished
// and not running); a pause is a gap in every line, also across statistics that were already on
// their way when it began.
//
// A remote run (setRemote) plots what its answers say: its rates and running requests hold from
// one answer to the next (step lines, never a ramp between sparse answers), its prompt rate is
// not reported (no line), and the KV and memory plots say they are the servers' and unknown.
//
// The time axis follows the whole run until the user drags or zooms it (horizontally);
// a double-click on any plot returns to following.
#pragma once

#include <QWidget>
#include <array>
#include <memory>

#include "app/run_snapshots.h"

class QCustomPlot;
class QCPItemText;
class QCPRange;

namespace sluice::ui {

class SeriesHistory;

class LivePlots final : public QWidget {
  Q_OBJECT

 public:
  enum class Panel { Throughput, Batch, KvBlocks, Memory };
  static constexpr int kNumPanels = 4;
  static constexpr int kDefaultMaxPointsPerGraph = 4000;

  explicit LivePlots(QWidget* parent = nullptr);
  ~LivePlots() override;

  // Adds one engine step's statistics to the throughput, batch and KV plots. backlogRows: the
  // rows of the job not yet finished and not running (-1 while unknown: no "waiting" point).
  void addStats(const sluice::StepStats& stats, qint64 backlogRows = -1);
  // Ends every line at the latest sample (a pause): the plots show a gap, not a bridge.
  void addGap();
  // A run paused (true) or resumed (false): a gap at both, so statistics that were still on
  // their way when the pause began end before it and are never joined to the resumed run's.
  void setPaused(bool paused);
  // Returns the top of the tokens/s axis for the values shown: their maximum with headroom
  // (NaN gaps ignored), 0 for none.
  static double throughputAxisTop(const QVector<double>& values);
  // Plots a remote run (true) or a local one (false, the default); see the top of this file.
  // Call before the run's first sample (after clear()).
  void setRemote(bool isRemote);
  bool isRemote() const { return m_isRemote; }
  // Returns the notice a panel shows over its empty plot ("KV cache: on the servers, not
  // reported"), or "" when it shows none.
  QString notice(Panel panel) const;
  // Adds one memory sample to the memory plot (titled GPU memory when the sample is from a GPU).
  void addMemory(const sluice::MemorySample& sample);
  // Forgets all history (a new run) and follows the time axis again.
  void clear();

  // Returns the plot of one panel, for composing or exporting (the history stays owned here).
  QCustomPlot* plot(Panel panel) const;
  // Returns the most points any graph holds now; never above maxPointsPerGraph().
  int largestGraphSize() const;
  int maxPointsPerGraph() const { return m_maxPointsPerGraph; }
  // Precondition: maxPoints >= 4. Clears the history.
  void setMaxPointsPerGraph(int maxPoints);
  bool isFollowing() const { return m_following; }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  QCustomPlot* makePlot(const QString& valueLabel);
  void buildThroughput();
  void buildBatch();
  void buildKvBlocks();
  void buildMemory();
  void makeHistories();
  void applyPalette();
  void fitLegendColumns(QCustomPlot* plot);
  void followLatest();
  void onUserRangeChanged(QCustomPlot* source, const QCPRange& range);
  void fitValueAxes(QCustomPlot* plot);
  void queueReplot();
  void addNotice(Panel panel, const QString& text);

  std::array<QCustomPlot*, kNumPanels> m_plots{};
  std::array<QCPItemText*, kNumPanels> m_notices{};
  std::unique_ptr<SeriesHistory> m_throughput;
  std::unique_ptr<SeriesHistory> m_batch;
  std::unique_ptr<SeriesHistory> m_kvBlocks;
  std::unique_ptr<SeriesHistory> m_memory;
  int m_maxPointsPerGraph = kDefaultMaxPointsPerGraph;
  double m_latestS = 0.0;
  bool m_following = true;
  bool m_settingRange = false;  // our own range changes must not switch following off
  bool m_memoryIsGpu = false;
  bool m_isRemote = false;
};

}  // namespace sluice::ui
