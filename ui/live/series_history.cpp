#include "ui/live/series_history.h"

#include <qcustomplot.h>

#include <cassert>
#include <limits>

namespace sluice::ui {

SeriesHistory::SeriesHistory(QVector<QCPGraph*> graphs, int maxPoints)
    : m_graphs(std::move(graphs)), m_maxPoints(maxPoints), m_pendingSums(m_graphs.size(), 0.0) {
  assert(maxPoints >= 4 && "merging pairs needs room for at least two full points");
}

bool SeriesHistory::append(double key, const QVector<double>& values) {
  assert(values.size() == m_graphs.size() && "one value per graph");
  if (!isEmpty() && key < m_lastKey) return false;
  m_lastKey = key;
  const bool lastPointFull = m_pendingSamples >= m_samplesPerPoint;
  if (lastPointFull && pointCount() >= m_maxPoints) mergeNeighbours();
  if (isEmpty() || m_pendingSamples >= m_samplesPerPoint)
    startPoint(key, values);
  else
    extendPoint(key, values);
  return true;
}

bool SeriesHistory::appendGap(double key) {
  if (isEmpty() || key < m_lastKey) return false;
  if (m_endsWithGap) return true;  // one gap is enough
  if (pointCount() >= m_maxPoints) mergeNeighbours();
  m_lastKey = key;
  for (QCPGraph* graph : m_graphs)
    graph->data()->add(QCPGraphData(key, std::numeric_limits<double>::quiet_NaN()));
  m_pendingSamples = m_samplesPerPoint;  // full: the next sample starts a point of its own
  m_endsWithGap = true;
  return true;
}

void SeriesHistory::clear() {
  for (QCPGraph* graph : m_graphs) graph->data()->clear();
  m_samplesPerPoint = 1;
  m_pendingSamples = 0;
  m_pendingKeySum = 0.0;
  m_pendingSums.fill(0.0);
  m_lastKey = 0.0;
  m_endsWithGap = false;
}

int SeriesHistory::pointCount() const {
  return m_graphs.isEmpty() ? 0 : m_graphs.front()->data()->size();
}

void SeriesHistory::startPoint(double key, const QVector<double>& values) {
  m_endsWithGap = false;
  m_pendingSamples = 1;
  m_pendingKeySum = key;
  for (int c = 0; c < m_graphs.size(); ++c) {
    m_pendingSums[c] = values[c];
    m_graphs[c]->data()->add(QCPGraphData(key, values[c]));
  }
}

void SeriesHistory::extendPoint(double key, const QVector<double>& values) {
  ++m_pendingSamples;
  m_pendingKeySum += key;
  // The mean key stays above the previous point's keys, so the container stays sorted.
  const double meanKey = m_pendingKeySum / m_pendingSamples;
  for (int c = 0; c < m_graphs.size(); ++c) {
    m_pendingSums[c] += values[c];
    auto last = m_graphs[c]->data()->end() - 1;
    last->key = meanKey;
    last->value = m_pendingSums[c] / m_pendingSamples;
  }
}

void SeriesHistory::mergeNeighbours() {
  const int count = pointCount();
  for (QCPGraph* graph : m_graphs) {
    const auto data = graph->data();
    QVector<QCPGraphData> merged;
    merged.reserve(count / 2 + 1);
    auto it = data->constBegin();
    for (int i = 0; i + 1 < count; i += 2, it += 2) {
      merged.append(
          QCPGraphData(0.5 * (it->key + (it + 1)->key), 0.5 * (it->value + (it + 1)->value)));
    }
    if (count % 2 == 1) merged.append(*it);
    data->set(merged, true);
  }
  m_samplesPerPoint *= 2;
  // A column may be all gaps (a value not reported): the gap is what appendGap added last.
  if (count % 2 == 0 || m_endsWithGap) {
    m_pendingSamples = m_samplesPerPoint;
    return;
  }
  // An odd point out stays half filled at the new resolution: resume it as the pending point.
  m_pendingSamples = m_samplesPerPoint / 2;
  const auto last = m_graphs.front()->data()->constEnd() - 1;
  m_pendingKeySum = last->key * m_pendingSamples;
  for (int c = 0; c < m_graphs.size(); ++c)
    m_pendingSums[c] = (m_graphs[c]->data()->constEnd() - 1)->value * m_pendingSamples;
}

}  // namespace sluice::ui
