// The Timeline tab: the request timeline with the run's output-length histogram beside it, and
// buttons to see the whole run or follow the newest rows. The histogram is redrawn at most twice
// a second however fast rows arrive, and only while the tab is shown (then once when it is).
#pragma once

#include <QTimer>
#include <QVector>
#include <QWidget>

#include "app/run_snapshots.h"

namespace sluice::ui {

class LengthHistogram;
class RequestTimelineWidget;

class TimelinePanel final : public QWidget {
  Q_OBJECT

 public:
  explicit TimelinePanel(QWidget* parent = nullptr);

  // Appends finished rows to the timeline and their output lengths (sample 0's tokens; rows
  // without output are left out) to the histogram.
  void addRows(const QVector<sluice::RowSnapshot>& rows);
  // Forgets every row (a new run).
  void clear();

  RequestTimelineWidget* timeline() const { return m_timeline; }
  LengthHistogram* outputLengths() const { return m_histogram; }

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void updateHistogram();

  RequestTimelineWidget* m_timeline = nullptr;
  LengthHistogram* m_histogram = nullptr;
  QVector<int> m_outputLengths;
  QTimer m_histogramTimer;
  bool m_isHistogramStale = false;  // lengths arrived while the tab was hidden
};

}  // namespace sluice::ui
