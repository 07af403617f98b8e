#include "ui/live/timeline_panel.h"

#include <QHBoxLayout>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QVBoxLayout>

#include "ui/common/length_histogram.h"
#include "ui/live/request_timeline_widget.h"

namespace sluice::ui {

namespace {
constexpr int kHistogramIntervalMs = 500;
}  // namespace

TimelinePanel::TimelinePanel(QWidget* parent) : QWidget(parent) {
  m_timeline = new RequestTimelineWidget(this);
  m_histogram = new LengthHistogram(this);
  m_histogram->setSubject("output tokens", "outputs");
  m_histogram->showMessage("Output lengths appear as rows finish.");
  auto* wholeRun = new QPushButton(tr("Whole run"), this);
  wholeRun->setToolTip(tr("Fits every row and the whole time axis into view (double-click)."));
  auto* newest = new QPushButton(tr("Follow newest"), this);
  newest->setToolTip(tr("One row per line, scrolled to the newest rows."));

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(wholeRun);
  buttons->addWidget(newest);
  buttons->addStretch(1);
  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->addWidget(m_timeline);
  splitter->addWidget(m_histogram);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);
  splitter->setSizes({700, 300});
  m_histogram->setMinimumWidth(240);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(buttons);
  layout->addWidget(splitter, 1);

  connect(wholeRun, &QPushButton::clicked, m_timeline, &RequestTimelineWidget::fitWholeRun);
  connect(newest, &QPushButton::clicked, this, [this] {
    m_timeline->verticalScrollBar()->setValue(m_timeline->verticalScrollBar()->maximum());
    m_timeline->setRowsPerLine(1);
  });
  m_histogramTimer.setSingleShot(true);
  m_histogramTimer.setInterval(kHistogramIntervalMs);
  connect(&m_histogramTimer, &QTimer::timeout, this, &TimelinePanel::updateHistogram);
}

void TimelinePanel::addRows(const QVector<sluice::RowSnapshot>& rows) {
  m_timeline->addRows(rows);
  for (const RowSnapshot& row : rows)
    if (!row.output.isEmpty() || row.outputTokens > 0) m_outputLengths.append(row.outputTokens);
  if (!m_histogramTimer.isActive()) m_histogramTimer.start();
}

void TimelinePanel::clear() {
  m_timeline->clear();
  m_outputLengths.clear();
  m_histogramTimer.stop();
  m_isHistogramStale = false;
  m_histogram->showMessage("Output lengths appear as rows finish.");
}

void TimelinePanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (m_isHistogramStale) updateHistogram();
}

void TimelinePanel::updateHistogram() {
  m_isHistogramStale = !isVisible();
  if (m_isHistogramStale || m_outputLengths.isEmpty()) return;
  m_histogram->setLengths(m_outputLengths);
}

}  // namespace sluice::ui
