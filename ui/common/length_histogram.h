// A histogram of token lengths, with count, mean, p50, p95 and max: of the prompts over a dataset,
// so a person sees before a run how long the prompts are and whether a few outliers dominate, or
// of the outputs of a run (setSubject).
#pragma once

#include <QString>
#include <QVector>
#include <QWidget>

class QCPBars;
class QCPItemStraightLine;
class QCustomPlot;
class QLabel;

namespace sluice::ui {

struct LengthStats {
  int count = 0;
  double mean = 0.0;
  int p50 = 0;
  int p95 = 0;
  int p99 = 0;
  int max = 0;
};

class LengthHistogram final : public QWidget {
  Q_OBJECT

 public:
  explicit LengthHistogram(QWidget* parent = nullptr);

  // Returns the statistics of lengths (nearest-rank percentiles); all zero when it is empty.
  static LengthStats computeStats(const QVector<int>& lengths);

  const QVector<int>& lengths() const { return m_lengths; }
  LengthStats stats() const { return m_stats; }
  // Returns the summary line shown under the plot.
  QString summaryText() const;
  // What the lengths are of: the axis label ("prompt tokens") and the plural noun of the
  // summary ("prompts"); takes effect with the next setLengths.
  void setSubject(const QString& axisLabel, const QString& noun);

 public slots:
  // Plots lengths (tokens per prompt) and their statistics; note adds a line (e.g. rows that
  // failed, or that only the first rows were counted).
  void setLengths(const QVector<int>& lengths, const QString& note = QString());
  // Empties the plot and shows message instead of statistics ("Counting… 40%").
  void showMessage(const QString& message);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  QCustomPlot* m_plot = nullptr;
  QCPBars* m_bars = nullptr;
  QCPItemStraightLine* m_p95Line = nullptr;
  QLabel* m_summary = nullptr;
  QVector<int> m_lengths;
  LengthStats m_stats;
  QString m_noun = "prompts";
};

}  // namespace sluice::ui
