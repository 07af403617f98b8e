#include "ui/common/length_histogram.h"

#include <qcustomplot.h>

#include <QEvent>
#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "ui/common/number_format.h"
#include "ui/common/plot_palette.h"

namespace sluice::ui {

namespace {

// About this many bars: enough to see the shape, few enough to stay readable at 380 px.
constexpr int kTargetBins = 30;

// Returns a bin width of 1, 2 or 5 times a power of ten covering maxLength in ~kTargetBins bins,
// so the axis reads in round numbers.
int niceBinWidth(int maxLength) {
  const double raw = std::max(1.0, static_cast<double>(maxLength + 1) / kTargetBins);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double step : {1.0, 2.0, 5.0, 10.0}) {
    if (step * magnitude >= raw) return static_cast<int>(step * magnitude);
  }
  return static_cast<int>(10.0 * magnitude);
}

// Nearest-rank percentile of sorted values, p in (0, 100].
int percentile(const QVector<int>& sorted, double p) {
  const auto rank =
      static_cast<qsizetype>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<qsizetype>(rank - 1, 0, sorted.size() - 1)];
}

}  // namespace

LengthHistogram::LengthHistogram(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  m_plot = new QCustomPlot(this);
  m_plot->setMinimumHeight(120);
  m_plot->xAxis->setLabel("prompt tokens");
  m_plot->yAxis->setLabel("rows");
  m_plot->setToolTip("How many prompts have each length in tokens; the dashed line is p95");
  m_bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
  m_bars->setPen(Qt::NoPen);
  m_bars->setBrush(QColor(0x4e, 0x79, 0xa7));
  m_p95Line = new QCPItemStraightLine(m_plot);
  m_p95Line->setPen(QPen(QColor(0xe1, 0x57, 0x59), 1, Qt::DashLine));
  m_p95Line->setVisible(false);
  m_summary = new QLabel(this);
  m_summary->setWordWrap(true);
  m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(m_plot, 1);
  layout->addWidget(m_summary);
  applyPlotPalette(m_plot, palette());
  showMessage("Prompt lengths appear once a model and a dataset are loaded.");
}

LengthStats LengthHistogram::computeStats(const QVector<int>& lengths) {
  LengthStats stats;
  if (lengths.isEmpty()) return stats;
  QVector<int> sorted = lengths;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0.0;
  for (const int length : sorted) sum += length;
  stats.count = static_cast<int>(sorted.size());
  stats.mean = sum / static_cast<double>(sorted.size());
  stats.p50 = percentile(sorted, 50.0);
  stats.p95 = percentile(sorted, 95.0);
  stats.p99 = percentile(sorted, 99.0);
  stats.max = sorted.back();
  return stats;
}

QString LengthHistogram::summaryText() const {
  return m_summary->text();
}

void LengthHistogram::setSubject(const QString& axisLabel, const QString& noun) {
  m_plot->xAxis->setLabel(axisLabel);
  m_plot->setToolTip(
      QString("How many %1 have each length in tokens; the dashed line is p95").arg(noun));
  m_noun = noun;
}

void LengthHistogram::setLengths(const QVector<int>& lengths, const QString& note) {
  m_lengths = lengths;
  m_stats = computeStats(lengths);
  // A long tail would squeeze the bulk into a few bars: past twice p99, the last bar collects it.
  const bool hasTail = m_stats.max > 2 * m_stats.p99;
  const int limit = hasTail ? m_stats.p99 : m_stats.max;
  const int width = niceBinWidth(limit);
  const qsizetype numBins = limit / width + 1;
  QVector<double> counts(numBins, 0.0);
  int numInTail = 0;
  for (const int length : lengths) {
    const qsizetype bin = std::max(0, length) / width;
    if (bin >= numBins) ++numInTail;
    counts[std::min(bin, numBins - 1)] += 1.0;
  }
  QVector<double> keys(counts.size());
  for (qsizetype i = 0; i < keys.size(); ++i) keys[i] = (static_cast<double>(i) + 0.5) * width;
  m_bars->setWidth(width * 0.9);
  m_bars->setData(keys, counts, /*alreadySorted=*/true);
  m_plot->xAxis->setRange(0, static_cast<double>(counts.size()) * width);
  const double highest = counts.isEmpty() ? 1.0 : *std::max_element(counts.begin(), counts.end());
  m_plot->yAxis->setRange(0, std::max(1.0, highest * 1.1));
  m_p95Line->point1->setCoords(m_stats.p95, 0);
  m_p95Line->point2->setCoords(m_stats.p95, 1);
  m_p95Line->setVisible(m_stats.count > 0);
  m_plot->replot();
  QString text =
      QString("%1 %2 · mean %3 · p50 %4 · p95 %5 · max %6 tokens")
          .arg(formatCount(m_stats.count), m_noun, formatDecimal(m_stats.mean, 1),
               formatCount(m_stats.p50), formatCount(m_stats.p95), formatCount(m_stats.max));
  if (numInTail > 0) {
    text += QString("\nthe last bar holds %1 longer %2 (up to %3)")
                .arg(formatCount(numInTail), m_noun, formatCount(m_stats.max));
  }
  if (!note.isEmpty()) text += "\n" + note;
  m_summary->setText(text);
}

void LengthHistogram::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) {
    applyPlotPalette(m_plot, palette());
    m_plot->replot();
  }
}

void LengthHistogram::showMessage(const QString& message) {
  m_lengths.clear();
  m_stats = {};
  m_bars->data()->clear();
  m_p95Line->setVisible(false);
  m_plot->replot();
  m_summary->setText(message);
}

}  // namespace sluice::ui
