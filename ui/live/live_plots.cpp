#include "ui/live/live_plots.h"

#include <qcustomplot.h>

#include <QEvent>
#include <QGridLayout>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "ui/common/plot_palette.h"
#include "ui/common/run_view_palette.h"
#include "ui/live/series_history.h"

namespace sluice::ui {

namespace {

namespace palette = run_view_palette;

constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;
// The memory plot's graphs, top band first: available, other, activations, state slots, KV pool,
// weights.
constexpr int kStateBandGraph = 3;
// The time axis starts this wide, so the first seconds of a run are not stretched across it.
constexpr double kMinTimeSpanS = 10.0;
constexpr double kHeadroom = 1.08;  // space above the highest point
constexpr double kFillTint = 0.6;   // stacked bands: this far from the background to the colour
const char* const kSeriesColour = "seriesColour";  // QObject property: a band's undimmed colour

QFont smallerFont(const QFont& base) {
  QFont font = base;
  if (font.pointSizeF() > 0) font.setPointSizeF(std::max(7.0, font.pointSizeF() - 1.0));
  return font;
}

QCPGraph* addLine(QCustomPlot* plot, const QString& name, const QColor& colour,
                  QCPAxis* valueAxis = nullptr) {
  QCPGraph* graph = plot->addGraph(plot->xAxis, valueAxis ? valueAxis : plot->yAxis);
  graph->setName(name);
  // One-pixel pens take QPainter's fast path; wider ones go through the stroker, which made a
  // replot of a few thousand jagged points cost tens of milliseconds.
  graph->setPen(QPen(colour, 1.0));
  return graph;
}

// A band of a stacked area, filled from zero. Bands are added from the top level down, so each
// lower band is painted over the one above it: opaque fills to zero cost a third of QCustomPlot's
// channel fills between graphs (measured: 1.7 ms against 4.2 ms for a jagged 3-band plot).
QCPGraph* addStackLevel(QCustomPlot* plot, const QString& name, const QColor& colour) {
  QCPGraph* graph = addLine(plot, name, colour);
  graph->setPen(QPen(colour.darker(115), 1.0));
  graph->setProperty(kSeriesColour, colour);
  graph->setBrush(colour);  // tinted towards the background in applyPalette()
  return graph;
}

// Opaque bands would hide the grid: draw it over the data instead.
void raiseGrid(QCustomPlot* plot) {
  for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) axis->grid()->setLayer("axes");
}

// Sets a graph's line style, for the graphs of a plot that are drawn as lines (not steps).
void setLineStyles(QCustomPlot* plot, QCPGraph::LineStyle style) {
  for (int g = 0; g < plot->graphCount(); ++g)
    if (plot->graph(g)->name() != "preemptions") plot->graph(g)->setLineStyle(style);
}

QVector<QCPGraph*> graphsOf(const QCustomPlot* plot) {
  QVector<QCPGraph*> graphs;
  for (int g = 0; g < plot->graphCount(); ++g) graphs.append(plot->graph(g));
  return graphs;
}

}  // namespace

LivePlots::LivePlots(QWidget* parent) : QWidget(parent) {
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setSpacing(4);
  buildThroughput();
  buildBatch();
  buildKvBlocks();
  buildMemory();
  for (int p = 0; p < kNumPanels; ++p) grid->addWidget(m_plots[p], p / 2, p % 2);
  grid->setColumnStretch(0, 1);
  grid->setColumnStretch(1, 1);
  grid->setRowStretch(0, 1);
  grid->setRowStretch(1, 1);
  makeHistories();
  addNotice(Panel::KvBlocks, tr("KV cache: on the servers, not reported"));
  addNotice(Panel::Memory, tr("Memory: on the servers, not reported"));
  applyPalette();
  followLatest();
}

void LivePlots::addNotice(Panel panel, const QString& text) {
  QCustomPlot* p = plot(panel);
  auto* notice = new QCPItemText(p);
  notice->position->setType(QCPItemPosition::ptAxisRectRatio);
  notice->position->setCoords(0.5, 0.5);
  notice->setPositionAlignment(Qt::AlignCenter);
  notice->setText(text);
  notice->setClipToAxisRect(false);
  notice->setVisible(false);
  m_notices[static_cast<int>(panel)] = notice;
}

void LivePlots::setRemote(bool isRemote) {
  m_isRemote = isRemote;
  for (QCPItemText* notice : m_notices)
    if (notice) notice->setVisible(isRemote);
  // A remote rate or count is known only when an answer arrives: it holds until the next one.
  const auto style = isRemote ? QCPGraph::lsStepLeft : QCPGraph::lsLine;
  setLineStyles(plot(Panel::Throughput), style);
  setLineStyles(plot(Panel::Batch), style);
  plot(Panel::Throughput)->graph(0)->setName(isRemote ? tr("prompt (not reported)") : "prompt");
  plot(Panel::Batch)->graph(1)->setName(isRemote ? tr("concurrency") : "max_num_seqs");
  for (QCustomPlot* p : m_plots) fitLegendColumns(p);
  queueReplot();
}

QString LivePlots::notice(Panel panel) const {
  const QCPItemText* item = m_notices[static_cast<int>(panel)];
  return item && item->visible() ? item->text() : QString();
}

LivePlots::~LivePlots() = default;

QCustomPlot* LivePlots::makePlot(const QString& valueLabel) {
  auto* plot = new QCustomPlot(this);
  plot->setMinimumSize(180, 140);
  const QFont small = smallerFont(font());
  plot->xAxis->setLabel("time (s)");
  plot->yAxis->setLabel(valueLabel);
  for (QCPAxis* axis : {plot->xAxis, plot->yAxis, plot->yAxis2}) {
    axis->setTickLabelFont(small);
    axis->setLabelFont(small);
    axis->setLabelPadding(2);
    axis->ticker()->setTickCount(4);
  }
  // The legend sits in its own row above the axis rect so it never hides the newest data.
  plot->axisRect()->insetLayout()->take(plot->legend);
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, plot->legend);
  plot->plotLayout()->setRowStretchFactor(0, 0.001);
  plot->legend->setVisible(true);
  plot->legend->setFont(small);
  plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
  plot->legend->setIconSize(14, 8);
  plot->legend->setMargins(QMargins(2, 2, 2, 0));
  plot->legend->setRowSpacing(0);
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot->axisRect()->setRangeDrag(Qt::Horizontal);
  plot->axisRect()->setRangeZoom(Qt::Horizontal);
  plot->setNoAntialiasingOnDrag(true);
  plot->installEventFilter(this);  // to reflow the legend when the plot is resized
  // Antialiased fills of jagged stacks cost several times the rest of a replot; the antialiased
  // outline drawn over each band hides the difference.
  plot->setNotAntialiasedElements(QCP::aeFills);
  connect(plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
          [this, plot](const QCPRange& range) { onUserRangeChanged(plot, range); });
  connect(plot, &QCustomPlot::beforeReplot, this, [this, plot] { fitValueAxes(plot); });
  connect(plot, &QCustomPlot::mouseDoubleClick, this, [this] {
    m_following = true;
    followLatest();
    queueReplot();
  });
  return plot;
}

void LivePlots::buildThroughput() {
  QCustomPlot* plot = makePlot("tokens/s");
  addLine(plot, "prompt", palette::series(1));
  addLine(plot, "generated", palette::series(0));
  m_plots[static_cast<int>(Panel::Throughput)] = plot;
}

void LivePlots::buildBatch() {
  QCustomPlot* plot = makePlot("running requests");
  addLine(plot, "running", palette::series(0));
  addLine(plot, "max_num_seqs", palette::series(9));  // dashed in applyPalette()
  // Queues and preemptions can be orders of magnitude above the batch size: their own axis.
  plot->yAxis2->setVisible(true);
  plot->yAxis2->setLabel("waiting rows · preemptions (total)");
  addLine(plot, "waiting", palette::series(1), plot->yAxis2);
  QCPGraph* preemptions = addLine(plot, "preemptions", palette::series(3), plot->yAxis2);
  preemptions->setLineStyle(QCPGraph::lsStepLeft);
  m_plots[static_cast<int>(Panel::Batch)] = plot;
}

void LivePlots::buildKvBlocks() {
  QCustomPlot* plot = makePlot("KV blocks");
  // Top level first (see addStackLevel); the legend then lists the bands as they are stacked.
  addStackLevel(plot, "free", palette::series(9));
  addStackLevel(plot, "cached", palette::series(5));
  addStackLevel(plot, "used", palette::series(0));
  raiseGrid(plot);
  m_plots[static_cast<int>(Panel::KvBlocks)] = plot;
}

void LivePlots::buildMemory() {
  QCustomPlot* plot = makePlot("memory (GiB)");
  addStackLevel(plot, "available", palette::series(9));
  addStackLevel(plot, "other", palette::series(8));
  addStackLevel(plot, "activations", palette::series(1));
  // A hybrid model's recurrent-state slots; named in the legend only when there are some.
  addStackLevel(plot, "state slots", palette::series(5))->removeFromLegend();
  addStackLevel(plot, "KV pool", palette::series(0));
  addStackLevel(plot, "weights", palette::series(4));
  raiseGrid(plot);
  m_plots[static_cast<int>(Panel::Memory)] = plot;
}

void LivePlots::makeHistories() {
  auto history = [this](Panel panel) {
    return std::make_unique<SeriesHistory>(graphsOf(plot(panel)), m_maxPointsPerGraph);
  };
  m_throughput = history(Panel::Throughput);
  m_batch = history(Panel::Batch);
  m_kvBlocks = history(Panel::KvBlocks);
  m_memory = history(Panel::Memory);
}

QCustomPlot* LivePlots::plot(Panel panel) const {
  return m_plots[static_cast<int>(panel)];
}

void LivePlots::addStats(const sluice::StepStats& stats, qint64 backlogRows) {
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  const double t = stats.elapsed_s;
  // Remote servers report no prompt rate (the driver's 0 would be a line that says none ran).
  m_throughput->append(
      t, {m_isRemote ? kNone : stats.prompt_tokens_per_s, stats.generation_tokens_per_s});
  const double waiting = backlogRows >= 0 ? double(backlogRows) : kNone;
  m_batch->append(t, {double(stats.num_running), double(stats.max_num_seqs), waiting,
                      double(stats.num_preemptions)});
  m_latestS = std::max(m_latestS, t);
  if (m_isRemote) {  // the servers' KV blocks are not seen from here: no line of zeros
    followLatest();
    queueReplot();
    return;
  }
  // num_kv_blocks_free counts the cached blocks too; the stack shows them once.
  const double used = stats.num_kv_blocks_used;
  const double cached = stats.num_kv_blocks_cached;
  const double freeOnly = std::max(0, stats.num_kv_blocks_free - stats.num_kv_blocks_cached);
  m_kvBlocks->append(t, {used + cached + freeOnly, used + cached, used});
  followLatest();
  queueReplot();
}

void LivePlots::addGap() {
  for (SeriesHistory* history :
       {m_throughput.get(), m_batch.get(), m_kvBlocks.get(), m_memory.get()})
    history->appendGap(history->lastKey());
  queueReplot();
}

void LivePlots::setPaused(bool /*paused*/) {
  // At a pause the lines end; at the resume, after whatever arrived in between (a step that was
  // running when the pause began), they end again, so the resumed run starts a line of its own.
  addGap();
}

double LivePlots::throughputAxisTop(const QVector<double>& values) {
  double highest = 0.0;
  for (const double v : values)
    if (!std::isnan(v)) highest = std::max(highest, v);
  return highest * kHeadroom;
}

void LivePlots::addMemory(const sluice::MemorySample& sample) {
  // On a GPU the whole device is the picture (GiB, with what is free on top). On the CPU the
  // system's free memory would dwarf the process (gigabytes against megabytes), so the stack
  // shows the process in MiB and the free memory is only named in the legend.
  const double unit = sample.isGpu ? kBytesPerGiB : kBytesPerGiB / 1024.0;
  QCustomPlot* memory = plot(Panel::Memory);
  if (sample.isGpu != m_memoryIsGpu || m_memory->isEmpty()) {
    m_memoryIsGpu = sample.isGpu;
    memory->yAxis->setLabel(sample.isGpu ? "GPU memory (GiB)" : "process memory (MiB)");
  }
  memory->graph(0)->setName(
      sample.isGpu ? QString("free")
                   : QString("system free %1 GiB").arg(sample.freeBytes / kBytesPerGiB, 0, 'f', 1));
  QCPGraph* stateBand = memory->graph(kStateBandGraph);
  if (sample.stateBytes > 0 && !memory->legend->hasItemWithPlottable(stateBand)) {
    stateBand->addToLegend();
  } else if (sample.stateBytes <= 0) {
    stateBand->removeFromLegend();
  }
  fitLegendColumns(memory);
  // Cumulative levels from the bottom band up, stored top first like the graphs.
  const qint64 bands[] = {sample.weightBytes, sample.kvPoolBytes,
                          sample.stateBytes,  sample.activationBytes,
                          sample.otherBytes,  sample.isGpu ? sample.freeBytes : 0};
  constexpr int kNumBands = static_cast<int>(std::size(bands));
  QVector<double> levels(kNumBands);
  double level = 0.0;
  for (int i = 0; i < kNumBands; ++i) {
    level += std::max<qint64>(0, bands[i]) / unit;
    levels[kNumBands - 1 - i] = level;
  }
  m_memory->append(sample.elapsedS, levels);
  m_latestS = std::max(m_latestS, sample.elapsedS);
  followLatest();
  queueReplot();
}

void LivePlots::clear() {
  for (SeriesHistory* history :
       {m_throughput.get(), m_batch.get(), m_kvBlocks.get(), m_memory.get()})
    history->clear();
  m_latestS = 0.0;
  m_following = true;
  followLatest();
  queueReplot();
}

int LivePlots::largestGraphSize() const {
  int largest = 0;
  for (const QCustomPlot* p : m_plots)
    for (const QCPGraph* graph : graphsOf(p)) largest = std::max(largest, graph->data()->size());
  return largest;
}

void LivePlots::setMaxPointsPerGraph(int maxPoints) {
  m_maxPointsPerGraph = maxPoints;
  clear();
  makeHistories();
}

bool LivePlots::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Resize) {
    for (QCustomPlot* p : m_plots)
      if (p == watched) fitLegendColumns(p);
  }
  return QWidget::eventFilter(watched, event);
}

void LivePlots::fitLegendColumns(QCustomPlot* p) {
  // As many equal columns as the widest entry allows, so the legend takes one or two rows.
  QCPLegend* legend = p->legend;
  const QFontMetrics metrics(legend->font());
  int widest = 0;
  int numEntries = 0;
  for (int i = 0; i < legend->itemCount(); ++i) {  // counts cells, empty ones included
    QCPAbstractLegendItem* item = legend->item(i);
    if (!item) continue;
    ++numEntries;
    item->setMargins(QMargins(3, 1, 3, 1));
    if (auto* entry = qobject_cast<QCPPlottableLegendItem*>(item))
      widest = std::max(widest, metrics.horizontalAdvance(entry->plottable()->name()));
  }
  const int entryWidth =
      widest + legend->iconSize().width() + legend->iconTextPadding() + 6 + legend->columnSpacing();
  const int columns =
      std::clamp((p->width() - 4) / std::max(1, entryWidth), 1, std::max(1, numEntries));
  if (columns == legend->wrap()) return;
  legend->setWrap(columns);
  legend->setFillOrder(QCPLegend::foColumnsFirst, true);
}

void LivePlots::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange) {
    applyPalette();
    queueReplot();
  }
}

void LivePlots::applyPalette() {
  const QPalette colours = palette();
  const QColor text = colours.color(QPalette::Text);
  for (QCustomPlot* p : m_plots) {
    applyPlotPalette(p, colours);
    for (QCPGraph* graph : graphsOf(p)) {
      const QVariant colour = graph->property(kSeriesColour);
      if (colour.isValid())
        graph->setBrush(
            palette::blend(colours.color(QPalette::Base), colour.value<QColor>(), kFillTint));
    }
  }
  // The batch limit is a reference line, drawn in the text colour so it reads on any background.
  plot(Panel::Batch)->graph(1)->setPen(QPen(text, 1.0, Qt::DashLine));
  for (QCPItemText* notice : m_notices) {
    if (!notice) continue;
    notice->setColor(colours.color(QPalette::PlaceholderText));
    notice->setFont(font());
  }
}

void LivePlots::followLatest() {
  if (!m_following) return;
  m_settingRange = true;
  const double upper = std::max(kMinTimeSpanS, m_latestS * 1.02);
  for (QCustomPlot* p : m_plots) p->xAxis->setRange(0.0, upper);
  m_settingRange = false;
}

void LivePlots::onUserRangeChanged(QCustomPlot* source, const QCPRange& range) {
  if (m_settingRange) return;
  // A drag or wheel zoom on one plot: stop following and move the other plots with it.
  m_following = false;
  m_settingRange = true;
  for (QCustomPlot* p : m_plots) {
    if (p == source) continue;
    p->xAxis->setRange(range);
    p->replot(QCustomPlot::rpQueuedReplot);
  }
  m_settingRange = false;
}

void LivePlots::fitValueAxes(QCustomPlot* p) {
  // Runs once per actual replot, not per sample: fits each value axis to the visible time span.
  const QCPRange visible = p->xAxis->range();
  if (p == plot(Panel::Throughput)) {
    QVector<double> values;
    for (const QCPGraph* graph : graphsOf(p)) {
      const auto points = graph->data();
      for (auto it = points->findBegin(visible.lower); it != points->findEnd(visible.upper); ++it)
        values.append(it->value);
    }
    const double top = throughputAxisTop(values);
    p->yAxis->setRange(0.0, top > 0.0 ? top : 1.0);
    return;
  }
  for (QCPAxis* axis : {p->yAxis, p->yAxis2}) {
    double upper = 0.0;
    for (const QCPGraph* graph : graphsOf(p)) {
      if (graph->valueAxis() != axis) continue;
      bool found = false;
      const QCPRange range = graph->getValueRange(found, QCP::sdBoth, visible);
      if (found) upper = std::max(upper, range.upper);
    }
    axis->setRange(0.0, upper > 0.0 ? upper * kHeadroom : 1.0);
  }
}

void LivePlots::queueReplot() {
  for (QCustomPlot* p : m_plots) p->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace sluice::ui
