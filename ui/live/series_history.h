// A bounded history of several time series that share their keys (one QCPGraph per column), for
// plots fed ~10 times a second for hours. When a graph reaches maxPoints, neighbouring points are
// merged pairwise (their mean), so the whole run stays visible at uniform resolution and each
// graph holds between maxPoints / 2 and maxPoints points. Columns are merged together, so stacked
// graphs (channel fills) keep identical keys. A gap (NaN) merged with a neighbour stays a gap.
#pragma once

#include <QVector>

class QCPGraph;

namespace sluice::ui {

class SeriesHistory final {
 public:
  // graphs: one per column, owned by their plot and alive as long as this history.
  // Precondition: maxPoints >= 4.
  SeriesHistory(QVector<QCPGraph*> graphs, int maxPoints);

  // Appends one sample; values has one entry per graph. A key older than the last one is dropped
  // (a stale snapshot); returns whether the sample was taken.
  bool append(double key, const QVector<double>& values);
  // Ends the lines at key (a pause): a NaN point that QCustomPlot draws as a gap and that is
  // never averaged into the next sample. Returns whether it was taken (not before the last key).
  bool appendGap(double key);

  // Forgets every point.
  void clear();

  // Returns the points each graph holds now (the same for every column).
  int pointCount() const;
  // Returns how many input samples one point stands for at the current resolution.
  int samplesPerPoint() const { return m_samplesPerPoint; }
  int maxPoints() const { return m_maxPoints; }
  bool isEmpty() const { return pointCount() == 0; }
  double lastKey() const { return m_lastKey; }

 private:
  void startPoint(double key, const QVector<double>& values);
  void extendPoint(double key, const QVector<double>& values);
  void mergeNeighbours();

  QVector<QCPGraph*> m_graphs;
  int m_maxPoints;
  int m_samplesPerPoint = 1;
  // The last point is the running mean of the samples gathered for it so far.
  int m_pendingSamples = 0;
  double m_pendingKeySum = 0.0;
  QVector<double> m_pendingSums;
  double m_lastKey = 0.0;
  bool m_endsWithGap = false;  // the last point is appendGap's
};

}  // namespace sluice::ui
