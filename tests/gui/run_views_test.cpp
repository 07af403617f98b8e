// The run views fed with synthetic snapshots: they must not crash, must stay bounded over hours
// of updates, must stay cheap enough for the GUI thread, must describe what is under the mouse,
// and must paint something. The time budgets are generous smoke checks for a loaded 2-core CI
// machine, not benchmarks; the measured times are printed.
#include <qcustomplot.h>

#include <QElapsedTimer>
#include <QImage>
#include <QtTest>

#include "tests/gui/gui_shots.h"
#include "ui/common/run_view_palette.h"
#include "ui/live/kv_block_map_widget.h"
#include "ui/live/live_plots.h"
#include "ui/live/request_timeline_widget.h"

using sluice::KvBlockMap;
using sluice::KvBlockState;
using sluice::MemorySample;
using sluice::RowSnapshot;
using sluice::StepStats;
using sluice::ui::KvBlockMapWidget;
using sluice::ui::LivePlots;
using sluice::ui::RequestTimelineWidget;

namespace {

constexpr double kAddStatsReplotBudgetMs = 20.0;  // average per addStats + immediate replot
constexpr double kSetMapBudgetMs = 20.0;          // setMap + paint of 100k blocks
constexpr double kTimelinePaintBudgetMs = 50.0;   // one paint of a 5000-row timeline

StepStats syntheticStats(int i) {
  StepStats stats;
  stats.step_index = i;
  stats.elapsed_s = 0.1 * i;
  stats.prompt_tokens_per_s = 2000.0 + 1500.0 * std::sin(i * 0.01);
  stats.generation_tokens_per_s = 800.0 + 300.0 * std::cos(i * 0.003);
  stats.max_num_seqs = 64;
  stats.num_running = 32 + (i % 33);
  stats.num_scheduled_requests = stats.num_running;
  stats.num_waiting = 500 - (i % 500);
  stats.num_preemptions = i / 50;
  stats.num_kv_blocks = 10000;
  stats.num_kv_blocks_used = 4000 + (i % 3000);
  stats.num_kv_blocks_cached = 1000;
  stats.num_kv_blocks_free = stats.num_kv_blocks - stats.num_kv_blocks_used;
  return stats;
}

MemorySample syntheticMemory(int i) {
  MemorySample sample;
  sample.elapsedS = 0.1 * i;
  sample.weightBytes = qint64(4) << 30;
  sample.kvPoolBytes = qint64(8) << 30;
  sample.activationBytes = (qint64(512) << 20) + (i % 100) * (qint64(1) << 20);
  sample.otherBytes = qint64(600) << 20;
  sample.freeBytes = qint64(60) << 30;
  sample.isGpu = true;
  return sample;
}

// Four states in a repeating pattern so every state appears everywhere in the pool.
KvBlockMap syntheticMap(int numBlocks) {
  KvBlockMap map;
  map.block_size = 16;
  map.states.resize(numBlocks);
  map.owner_rows.resize(numBlocks, -1);
  for (int b = 0; b < numBlocks; ++b) {
    const int kind = b % 10;
    if (kind < 4) {
      map.states[b] = KvBlockState::Owned;
      map.owner_rows[b] = b / 40;
    } else if (kind < 5) {
      map.states[b] = KvBlockState::Shared;
      map.owner_rows[b] = 7;
    } else if (kind < 7) {
      map.states[b] = KvBlockState::CachedFree;
    } else {
      map.states[b] = KvBlockState::Free;
    }
  }
  return map;
}

// Every 20th row (5% of them) takes a minute; the others a few seconds.
QVector<RowSnapshot> syntheticRows(int numRows) {
  QVector<RowSnapshot> rows;
  rows.reserve(numRows);
  for (int i = 0; i < numRows; ++i) {
    RowSnapshot row;
    row.rowIndex = i;
    row.id = QString("r%1").arg(i);
    row.status = i % 97 == 3 ? "failed" : "done";
    row.finishReason = i % 97 == 3 ? "error" : "stop";
    row.arrivalS = 0.05 * i;
    row.queueMs = 20.0 + (i % 13) * 10.0;
    row.ttftMs = row.queueMs + 150.0 + (i % 7) * 20.0;
    row.totalMs = i % 20 == 0 ? 60000.0 + i : row.ttftMs + 1000.0 + (i % 50) * 40.0;
    rows.append(row);
  }
  return rows;
}

// Returns how many distinct colours an image has, up to a cap: a blank widget has one or two.
int distinctColours(const QImage& image, int cap = 16) {
  QSet<QRgb> colours;
  const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
  for (int y = 0; y < rgb.height() && colours.size() < cap; y += 3)
    for (int x = 0; x < rgb.width() && colours.size() < cap; x += 3)
      colours.insert(rgb.pixel(x, y));
  return colours.size();
}

}  // namespace

class RunViewsTest : public QObject {
  Q_OBJECT

 private slots:
  void livePlotsStayBoundedAndCheap();
  void livePlotsClearAndFollow();
  void livePlotsAxisShowsRealPeaks();
  void livePlotsDrawPausesAsGaps();
  void livePlotsGapOutlastsStatsInFlightAtThePause();
  void livePlotsSayARemoteRunsKvAndMemoryAreUnknown();
  void livePlotsWaitingIsTheBacklog();
  void livePlotsStackAHybridModelsStateSlots();
  void kvMapDescribesBlocks();
  void kvMapIsCheapForLargePools();
  void kvMapHandlesTinyAreasAndEmptyMaps();
  void kvMapSaysAHybridModelsStateSlots();
  void timelineMarksSlowestRows();
  void timelineDescribesRowsAndScrolls();
};

void RunViewsTest::livePlotsStayBoundedAndCheap() {
  LivePlots plots;
  plots.resize(500, 400);
  plots.show();
  QVERIFY(QTest::qWaitForWindowExposed(&plots));

  QElapsedTimer timer;
  timer.start();
  constexpr int kNumUpdates = 100000;  // ~3 hours at 10 updates per second
  for (int i = 0; i < kNumUpdates; ++i) {
    plots.addStats(syntheticStats(i));
    if (i % 10 == 0) plots.addMemory(syntheticMemory(i));
  }
  const double feedMs = timer.nsecsElapsed() / 1e6;
  qInfo("100k addStats (+10k addMemory) without replots: %.1f ms, %.4f ms each", feedMs,
        feedMs / kNumUpdates);
  QVERIFY(plots.largestGraphSize() <= plots.maxPointsPerGraph());
  QVERIFY(plots.largestGraphSize() >= plots.maxPointsPerGraph() / 2);
  QCOMPARE(plots.plot(LivePlots::Panel::Memory)->yAxis->label(), QString("GPU memory (GiB)"));
  // The whole run stays on the time axis while following.
  QVERIFY(plots.isFollowing());
  QVERIFY(plots.plot(LivePlots::Panel::KvBlocks)->xAxis->range().upper >= 0.1 * (kNumUpdates - 1));

  constexpr int kNumTimed = 100;
  timer.restart();
  for (int i = kNumUpdates; i < kNumUpdates + kNumTimed; ++i) {
    plots.addStats(syntheticStats(i));
    for (int p = 0; p < LivePlots::kNumPanels; ++p)
      plots.plot(static_cast<LivePlots::Panel>(p))->replot(QCustomPlot::rpImmediateRefresh);
  }
  const double perUpdateMs = timer.nsecsElapsed() / 1e6 / kNumTimed;
  qInfo("addStats + replot of all four plots at 500x400: %.2f ms (budget %.0f ms)", perUpdateMs,
        kAddStatsReplotBudgetMs);
  QVERIFY2(perUpdateMs < kAddStatsReplotBudgetMs, qPrintable(QString::number(perUpdateMs)));
  QVERIFY(plots.largestGraphSize() <= plots.maxPointsPerGraph());

  QCoreApplication::processEvents();  // the queued replots
  const QImage image = plots.grab().toImage();
  QVERIFY(!image.isNull());
  QVERIFY2(distinctColours(image) >= 8, "the plots should show lines, fills and labels");
}

void RunViewsTest::livePlotsClearAndFollow() {
  LivePlots plots;
  plots.setMaxPointsPerGraph(64);
  for (int i = 0; i < 1000; ++i) plots.addStats(syntheticStats(i));
  QVERIFY(plots.largestGraphSize() <= 64);
  // A stale sample (older than the last) is dropped rather than unsorting the history.
  const int before = plots.plot(LivePlots::Panel::Throughput)->graph(0)->data()->size();
  plots.addStats(syntheticStats(10));
  QCOMPARE(plots.plot(LivePlots::Panel::Throughput)->graph(0)->data()->size(), before);

  // A user zoom on one plot stops following and moves the others with it.
  plots.plot(LivePlots::Panel::Batch)->xAxis->setRange(5.0, 15.0);
  QVERIFY(!plots.isFollowing());
  QCOMPARE(plots.plot(LivePlots::Panel::Memory)->xAxis->range().lower, 5.0);
  plots.addStats(syntheticStats(2000));
  QCOMPARE(plots.plot(LivePlots::Panel::Throughput)->xAxis->range().upper, 15.0);

  plots.clear();
  QCOMPARE(plots.largestGraphSize(), 0);
  QVERIFY(plots.isFollowing());
  plots.addStats(syntheticStats(3));
  QCOMPARE(plots.largestGraphSize(), 1);
}

// The tokens/s axis covers the highest value in view (a start-up burst too), and fits again
// when the view moves past it.
void RunViewsTest::livePlotsAxisShowsRealPeaks() {
  LivePlots plots;
  plots.resize(500, 400);
  plots.show();
  QVERIFY(QTest::qWaitForWindowExposed(&plots));
  for (int i = 0; i < 300; ++i) {
    StepStats stats = syntheticStats(i);
    const bool startup = i < 5;  // prefill of the first batch: a short burst
    stats.prompt_tokens_per_s = startup ? 40000.0 : 900.0 + (i % 7) * 10.0;
    stats.generation_tokens_per_s = startup ? 20000.0 : 500.0 + (i % 5) * 10.0;
    if (i == 150) stats.generation_tokens_per_s = 3000.0;  // one step's peak mid-run
    plots.addStats(stats);
  }
  QCustomPlot* throughput = plots.plot(LivePlots::Panel::Throughput);
  throughput->replot(QCustomPlot::rpImmediateRefresh);
  QVERIFY2(throughput->yAxis->range().upper >= 40000.0,
           qPrintable(QString::number(throughput->yAxis->range().upper)));
  // Past the burst (a zoom on the later part of the run): the axis fits the peak that is seen.
  throughput->xAxis->setRange(10.0, 29.9);
  throughput->replot(QCustomPlot::rpImmediateRefresh);
  const double top = throughput->yAxis->range().upper;
  QVERIFY2(top >= 3000.0 && top < 4000.0, qPrintable(QString::number(top)));
  QCOMPARE(LivePlots::throughputAxisTop({100.0, 5000.0, 200.0}), 5000.0 * 1.08);
  QCOMPARE(LivePlots::throughputAxisTop({}), 0.0);
}

void RunViewsTest::livePlotsDrawPausesAsGaps() {
  for (const int maxPoints : {4000, 8}) {  // with and without merging points
    LivePlots plots;
    plots.setMaxPointsPerGraph(maxPoints);
    for (int i = 0; i < 50; ++i) plots.addStats(syntheticStats(i));
    plots.addGap();
    plots.addGap();                         // a second pause marker adds nothing
    StepStats after = syntheticStats(300);  // 25 s later
    after.generation_tokens_per_s = 123.0;
    plots.addStats(after);
    const auto data = plots.plot(LivePlots::Panel::Throughput)->graph(1)->data();
    int numGaps = 0;
    for (auto it = data->constBegin(); it != data->constEnd(); ++it)
      numGaps += std::isnan(it->value) ? 1 : 0;
    QVERIFY2(numGaps >= 1, qPrintable(QString("max points %1").arg(maxPoints)));
    // The first sample after the pause is a point of its own, not averaged into the gap.
    QCOMPARE((data->constEnd() - 1)->value, 123.0);
    QVERIFY(std::isnan((data->constEnd() - 2)->value));
    // Time goes on after it.
    for (int i = 301; i < 400; ++i) plots.addStats(syntheticStats(i));
    QVERIFY(!std::isnan((data->constEnd() - 1)->value));
  }
}

// A step that was running when Pause was pressed reports after the pause began (its statistics
// were already queued to the window): the line it ends must not be joined to the resumed run's.
void RunViewsTest::livePlotsGapOutlastsStatsInFlightAtThePause() {
  LivePlots plots;
  for (int i = 0; i < 50; ++i) plots.addStats(syntheticStats(i));
  plots.setPaused(true);
  StepStats late = syntheticStats(51);  // sent before the pause, arrives after it
  late.generation_tokens_per_s = 111.0;
  plots.addStats(late);
  plots.setPaused(false);  // 25 s later
  StepStats resumed = syntheticStats(300);
  resumed.generation_tokens_per_s = 222.0;
  plots.addStats(resumed);
  const auto data = plots.plot(LivePlots::Panel::Throughput)->graph(1)->data();
  auto it = data->constEnd() - 1;
  QCOMPARE(it->value, 222.0);
  --it;
  QVERIFY2(std::isnan(it->value), "the resumed line is joined to the step before the pause");
  QCOMPARE((it - 1)->value, 111.0);  // the late step is drawn, before the gap
}

// A remote run: its servers' KV blocks and memory are not seen from here, so those plots say so
// (and draw no line of zeros); its rates hold between answers (steps, not a ramp from one
// answer to the next), and the prompt rate it does not report is no line at 0.
void RunViewsTest::livePlotsSayARemoteRunsKvAndMemoryAreUnknown() {
  LivePlots plots;
  plots.resize(800, 500);
  QVERIFY(plots.notice(LivePlots::Panel::KvBlocks).isEmpty());
  plots.setRemote(true);
  QCOMPARE(plots.notice(LivePlots::Panel::KvBlocks),
           QString("KV cache: on the servers, not reported"));
  QCOMPARE(plots.notice(LivePlots::Panel::Memory), QString("Memory: on the servers, not reported"));
  for (const double t : {4.0, 9.0, 9.5, 20.0}) {  // answers arrive when they arrive
    StepStats stats;
    stats.elapsed_s = t;
    stats.generation_tokens_per_s = 10.0 * t;
    stats.num_running = 8;
    stats.max_num_seqs = 8;
    plots.addStats(stats, 100);
  }
  QCustomPlot* kv = plots.plot(LivePlots::Panel::KvBlocks);
  for (int g = 0; g < kv->graphCount(); ++g) QCOMPARE(kv->graph(g)->dataCount(), 0);
  QCustomPlot* throughput = plots.plot(LivePlots::Panel::Throughput);
  const auto prompt = throughput->graph(0)->data();
  for (auto it = prompt->constBegin(); it != prompt->constEnd(); ++it)
    QVERIFY(std::isnan(it->value));
  const auto generated = throughput->graph(1);
  QCOMPARE(generated->dataCount(), 4);
  QCOMPARE(generated->lineStyle(), QCPGraph::lsStepLeft);
  QCOMPARE(plots.plot(LivePlots::Panel::Batch)->graph(0)->lineStyle(), QCPGraph::lsStepLeft);
  // A pause ends the answers' line too, although the prompt line beside it is all gaps.
  plots.setPaused(true);
  QVERIFY(std::isnan((generated->data()->constEnd() - 1)->value));
  QCOMPARE(generated->dataCount(), 5);
  const QImage image = plots.grab().toImage();
  QVERIFY(!image.isNull());
  QVERIFY(sluice::test::saveShot(plots, "live-plots-remote"));
  // A local run afterwards plots its KV blocks again, as lines.
  plots.clear();
  plots.setRemote(false);
  QVERIFY(plots.notice(LivePlots::Panel::Memory).isEmpty());
  plots.addStats(syntheticStats(1));
  QCOMPARE(kv->graph(0)->dataCount(), 1);
  QCOMPARE(generated->lineStyle(), QCPGraph::lsLine);
}

void RunViewsTest::livePlotsWaitingIsTheBacklog() {
  LivePlots plots;
  StepStats stats = syntheticStats(1);
  stats.num_waiting = 768;  // the engine's queue: the job's read-ahead window
  plots.addStats(stats, 4200);
  const auto waiting = plots.plot(LivePlots::Panel::Batch)->graph(2);
  QCOMPARE(waiting->name(), QString("waiting"));
  QCOMPARE((waiting->data()->constEnd() - 1)->value, 4200.0);
  plots.addStats(syntheticStats(2), -1);  // not known yet: no point, not the queue length
  QVERIFY(std::isnan((waiting->data()->constEnd() - 1)->value));
}

// A hybrid model's state slots are a band of their own between the KV pool and the activations,
// named in the legend only while there are some.
void RunViewsTest::livePlotsStackAHybridModelsStateSlots() {
  LivePlots plots;
  QCustomPlot* memory = plots.plot(LivePlots::Panel::Memory);
  QCPGraph* state = nullptr;
  for (int g = 0; g < memory->graphCount(); ++g) {
    if (memory->graph(g)->name() == "state slots") state = memory->graph(g);
  }
  QVERIFY(state != nullptr);
  MemorySample sample;  // on the CPU: MiB
  sample.weightBytes = qint64(10) << 20;
  sample.kvPoolBytes = qint64(20) << 20;
  sample.activationBytes = qint64(5) << 20;
  sample.otherBytes = qint64(7) << 20;
  sample.elapsedS = 1.0;
  plots.addMemory(sample);
  QVERIFY(!memory->legend->hasItemWithPlottable(state));
  QCOMPARE(state->data()->at(0)->value, 30.0);  // no state: level with the KV pool's top
  sample.stateBytes = qint64(53) << 20;
  sample.elapsedS = 2.0;
  plots.addMemory(sample);
  QVERIFY(memory->legend->hasItemWithPlottable(state));
  QCOMPARE(state->data()->at(1)->value, 10.0 + 20.0 + 53.0);
}

void RunViewsTest::kvMapDescribesBlocks() {
  KvBlockMapWidget widget;
  widget.resize(800, 600);
  widget.show();
  QVERIFY(QTest::qWaitForWindowExposed(&widget));
  const KvBlockMap map = syntheticMap(100000);
  widget.setMap(map);
  QCOMPARE(widget.blockCount(), 100000);
  QCOMPARE(widget.count(KvBlockState::Owned), 40000);
  QCOMPARE(widget.count(KvBlockState::Shared), 10000);
  QCOMPARE(widget.count(KvBlockState::CachedFree), 20000);
  QCOMPARE(widget.count(KvBlockState::Free), 30000);

  for (int id : {0, 1, 4, 5, 8, 1234, 57321, 99999}) {
    const QRect cell = widget.cellRect(id);
    QVERIFY2(!cell.isEmpty(), qPrintable(QString("block %1 has no cell").arg(id)));
    QCOMPARE(widget.blockAt(cell.center()), id);
  }
  QCOMPARE(widget.describeAt(widget.cellRect(1234).center()),
           QString("block 1234 · row 7 · shared"));
  QCOMPARE(widget.describeAt(widget.cellRect(1233).center()),
           QString("block 1233 · row 30 · owned"));
  QVERIFY(widget.describeAt(widget.cellRect(1235).center()).startsWith("block 1235 · cached"));
  QCOMPARE(widget.describeAt(widget.cellRect(1238).center()), QString("block 1238 · free"));
  QVERIFY(widget.describeAt(QPoint(1, 1)).isEmpty());  // the legend, not a block
  QCOMPARE(widget.blockAt(QPoint(799, 599)), -1);

  // An owned cell is painted in its row's colour.
  const QImage image = widget.grab().toImage();
  QVERIFY(distinctColours(image) >= 6);
  const QRect owned = widget.cellRect(1233);
  QCOMPARE(image.pixel(owned.topLeft()), sluice::ui::run_view_palette::ownerColour(30));
}

void RunViewsTest::kvMapIsCheapForLargePools() {
  KvBlockMapWidget widget;
  widget.resize(500, 400);
  widget.show();
  QVERIFY(QTest::qWaitForWindowExposed(&widget));
  KvBlockMap map = syntheticMap(100000);
  constexpr int kNumMaps = 20;
  QElapsedTimer timer;
  timer.start();
  for (int i = 0; i < kNumMaps; ++i) {
    std::rotate(map.states.begin(), map.states.begin() + 7, map.states.end());
    widget.setMap(map);
    widget.repaint();  // builds the image and paints it, as the next paint event would
  }
  const double perMapMs = timer.nsecsElapsed() / 1e6 / kNumMaps;
  qInfo("setMap + paint of 100k blocks at 500x400: %.2f ms (budget %.0f ms)", perMapMs,
        kSetMapBudgetMs);
  QVERIFY2(perMapMs < kSetMapBudgetMs, qPrintable(QString::number(perMapMs)));
  // 100k blocks do not fit 500x400 at one pixel each: the image is scaled, hit tests still work.
  const QRect cell = widget.cellRect(54321);
  QVERIFY(widget.describeAt(cell.center()).startsWith("block "));
  QVERIFY(distinctColours(widget.grab().toImage()) >= 4);
}

void RunViewsTest::kvMapHandlesTinyAreasAndEmptyMaps() {
  KvBlockMapWidget widget;
  widget.resize(300, 200);
  QVERIFY(!widget.grab().isNull());  // nothing set yet
  widget.setMap(KvBlockMap{});
  QCOMPARE(widget.blockAt(QPoint(150, 150)), -1);
  widget.setMap(syntheticMap(10));
  QVERIFY(!widget.cellRect(9).isEmpty());
  QCOMPARE(widget.blockAt(widget.cellRect(9).center()), 9);
  widget.resize(20, 10);  // no room for the grid below the legend
  QVERIFY(!widget.grab().isNull());
  KvBlockMap ragged = syntheticMap(100);
  ragged.owner_rows.resize(50);  // malformed: must not be read past its end
  widget.resize(300, 200);
  widget.setMap(ragged);
  QVERIFY(widget.describeAt(widget.cellRect(99).center()).startsWith("block 99"));
}

void RunViewsTest::kvMapSaysAHybridModelsStateSlots() {
  KvBlockMapWidget widget;
  widget.resize(600, 200);
  KvBlockMap map = syntheticMap(50);
  widget.setMap(map);
  QVERIFY(widget.stateSlotsText().isEmpty());  // a model without recurrent state
  map.num_state_slots = 36;
  map.num_state_slots_used = 5;
  map.num_state_checkpoints = 2;
  map.state_slot_bytes = size_t{3} << 19;  // 1.5 MiB
  widget.setMap(map);
  QCOMPARE(widget.stateSlotsText(),
           QString("state slots 5 / 36 used · 2 checkpoints · 1.5 MiB each"));
  QVERIFY(!widget.grab().isNull());
}

void RunViewsTest::timelineMarksSlowestRows() {
  RequestTimelineWidget timeline;
  timeline.resize(600, 400);
  timeline.show();
  QVERIFY(QTest::qWaitForWindowExposed(&timeline));
  const QVector<RowSnapshot> rows = syntheticRows(5000);
  // In several batches, as the worker sends them.
  for (int start = 0; start < rows.size(); start += 250) timeline.addRows(rows.mid(start, 250));
  QCOMPARE(timeline.rowCount(), 5000);

  const QVector<int> slowest = timeline.slowestPositions();
  QCOMPARE(slowest.size(), 250);
  QCOMPARE(slowest.front(), 4980);  // the largest planted total
  for (int position : slowest) QVERIFY2(position % 20 == 0, qPrintable(QString::number(position)));
  QVERIFY(timeline.isSlow(0));
  QVERIFY(!timeline.isSlow(1));
  QVERIFY(timeline.slowThresholdMs() >= 59000.0);  // generation time: the total less the queue

  // A slow row that is in view carries the red marker at the row gutter's edge.
  timeline.scrollToRow(4980);
  const QImage image = timeline.viewport()->grab().toImage();
  const QRect bar = timeline.barRect(4980);
  const int markerX = timeline.gutterWidth() - 2;
  QCOMPARE(timeline.rowAt(QPoint(markerX, bar.center().y())), 4980);
  QCOMPARE(QColor(image.pixel(markerX, bar.center().y())),
           sluice::ui::run_view_palette::slowOutlineColour());
  QVERIFY(distinctColours(image) >= 5);

  QElapsedTimer timer;
  timer.start();
  timeline.viewport()->repaint();
  const double paintMs = timer.nsecsElapsed() / 1e6;
  qInfo("paint of a 5000-row timeline at 600x400: %.2f ms (budget %.0f ms)", paintMs,
        kTimelinePaintBudgetMs);
  QVERIFY(paintMs < kTimelinePaintBudgetMs);
}

void RunViewsTest::timelineDescribesRowsAndScrolls() {
  RequestTimelineWidget timeline;
  timeline.resize(600, 400);
  timeline.show();
  QVERIFY(QTest::qWaitForWindowExposed(&timeline));
  timeline.addRows(syntheticRows(5000));
  timeline.setRowsPerLine(1);  // one row per line, following the tail
  // Following the tail: the newest row is visible at the bottom.
  const QRect newest = timeline.barRect(4999);
  QVERIFY(newest.bottom() <= timeline.viewport()->height());
  QVERIFY(newest.top() >= 0);
  QCOMPARE(timeline.rowAt(QPoint(10, newest.center().y())), 4999);

  timeline.scrollToRow(3);
  const QString text = timeline.describeAt(QPoint(10, timeline.barRect(3).center().y()));
  QVERIFY2(text.startsWith("row 3 · id r3 · failed (error)"), qPrintable(text));
  QVERIFY2(text.contains("queued 50 ms · prefill 210 ms · decode 1.12 s"), qPrintable(text));
  QVERIFY(timeline.describeAt(QPoint(10, 2)).isEmpty());  // the header

  timeline.zoomTime(8.0, 300);
  QVERIFY(timeline.horizontalScrollBar()->maximum() > 0);
  timeline.setRowHeight(3);
  QCOMPARE(timeline.rowHeight(), 3);
  QVERIFY(!timeline.grab().isNull());
  timeline.fitTime();
  QCOMPARE(timeline.horizontalScrollBar()->maximum(), 0);

  timeline.clear();
  QCOMPARE(timeline.rowCount(), 0);
  QVERIFY(timeline.slowestPositions().isEmpty());
  QVERIFY(!timeline.grab().isNull());
}

QTEST_MAIN(RunViewsTest)
#include "run_views_test.moc"
