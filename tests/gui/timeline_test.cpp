// The request timeline at scale: the slowest rows are ranked by their own generation time (not
// the queue wait that grows along a long run), the whole run fits the view (several rows per
// line), no time label is cut at the right edge, and the Timeline tab shows the run's output
// lengths beside it.
#include <QElapsedTimer>
#include <QScrollBar>
#include <QTest>

#include <QStandardPaths>
#include <QTabWidget>

#include "tests/gui/gui_shots.h"
#include "ui/common/length_histogram.h"
#include "ui/live/request_timeline_widget.h"
#include "ui/live/timeline_panel.h"
#include "ui/window/main_window.h"

using sluice::RowSnapshot;
using sluice::ui::RequestTimelineWidget;

namespace {

constexpr double kWholeRunPaintBudgetMs = 50.0;  // one paint of 5000 rows fitted into 600x400

// A long run as a job reads it: each row waits longer in the queue than the one before (the
// last ones about 100 s), while every 20th row is slow to generate (5 s against about 1 s).
QVector<RowSnapshot> longRun(int numRows) {
  QVector<RowSnapshot> rows;
  for (int i = 0; i < numRows; ++i) {
    RowSnapshot row;
    row.rowIndex = i;
    row.id = QString("r%1").arg(i);
    row.status = "done";
    row.finishReason = "stop";
    row.arrivalS = 0.01 * i;
    row.queueMs = 20.0 * i;
    row.ttftMs = row.queueMs + 100.0;
    row.totalMs = row.ttftMs + (i % 20 == 7 ? 5000.0 : 900.0 + (i % 10) * 10.0);
    row.output = "text";
    row.outputTokens = 10 + i % 200;
    rows.append(row);
  }
  return rows;
}

}  // namespace

class TimelineTest : public QObject {
  Q_OBJECT

 private slots:
  void slowestAreRankedByGenerationTime() {
    RequestTimelineWidget timeline;
    timeline.resize(600, 400);
    timeline.addRows(longRun(5000));
    const QVector<int> slowest = timeline.slowestPositions();
    QCOMPARE(slowest.size(), 250);  // 5%
    for (const int position : slowest)
      QVERIFY2(position % 20 == 7, qPrintable(QString("row %1 is only late").arg(position)));
    QVERIFY(!timeline.isSlow(4999));  // waited longest, generated fast
    QCOMPARE(timeline.slowThresholdMs(), 5100.0);
  }

  void wholeRunFitsTheView() {
    RequestTimelineWidget timeline;
    timeline.resize(600, 400);
    timeline.show();
    QVERIFY(QTest::qWaitForWindowExposed(&timeline));
    timeline.addRows(longRun(5000));
    // A run starts seen whole.
    QVERIFY(timeline.rowsPerLine() > 1);
    QCOMPARE(timeline.verticalScrollBar()->maximum(), 0);
    timeline.setRowsPerLine(1);  // Follow newest
    QVERIFY(timeline.verticalScrollBar()->maximum() > 0);

    timeline.fitWholeRun();
    QVERIFY(timeline.rowsPerLine() > 1);
    QCOMPARE(timeline.verticalScrollBar()->maximum(), 0);
    QCOMPARE(timeline.horizontalScrollBar()->maximum(), 0);
    for (const int position : {0, 2500, 4999}) {
      const QRect bar = timeline.barRect(position);
      QVERIFY2(bar.top() >= 0 && bar.bottom() < timeline.viewport()->height(),
               qPrintable(QString("row %1 is out of view").arg(position)));
    }
    // A line shows its slowest row, so no slow row hides in the overview.
    const QRect line = timeline.barRect(7);
    QCOMPARE(timeline.rowAt(QPoint(10, line.center().y())), 7);
    QVERIFY(timeline.describeAt(QPoint(10, line.center().y())).contains("the slowest of rows"));
    // Rows still arriving keep the whole run in view.
    QVector<RowSnapshot> more = longRun(6000).mid(5000);
    timeline.addRows(more);
    QCOMPARE(timeline.verticalScrollBar()->maximum(), 0);

    QElapsedTimer timer;
    timer.start();
    timeline.viewport()->repaint();
    const double paintMs = timer.nsecsElapsed() / 1e6;
    qInfo("paint of 6000 rows fitted into 600x400: %.2f ms (budget %.0f ms)", paintMs,
          kWholeRunPaintBudgetMs);
    QVERIFY(paintMs < kWholeRunPaintBudgetMs);

    timeline.scrollToRow(3);  // going to a row shows it on its own line
    QCOMPARE(timeline.rowsPerLine(), 1);
    QCOMPARE(timeline.rowAt(QPoint(10, timeline.barRect(3).center().y())), 3);
  }

  void timeLabelsAreNeverCut() {
    RequestTimelineWidget timeline;
    timeline.resize(600, 300);
    timeline.show();
    QVERIFY(QTest::qWaitForWindowExposed(&timeline));
    RowSnapshot row;
    row.totalMs = 300000.0;  // the run ends on a round tick: 300 s at the right edge
    row.queueMs = 10.0;
    row.ttftMs = 20.0;
    timeline.addRows({row});
    for (const double zoom : {1.0, 1.7, 3.0, 11.0}) {
      if (zoom > 1.0) timeline.zoomTime(zoom, 300);
      const auto ticks = timeline.timeTicks();
      QVERIFY(ticks.size() >= 2);
      bool hasRightLabel = false;
      for (const auto& tick : ticks) {
        if (tick.label.isEmpty()) continue;
        QVERIFY2(
            tick.labelRect.left() >= 0 && tick.labelRect.right() < timeline.viewport()->width(),
            qPrintable(QString("label %1 at %2..%3 of %4")
                           .arg(tick.label)
                           .arg(tick.labelRect.left())
                           .arg(tick.labelRect.right())
                           .arg(timeline.viewport()->width())));
        QVERIFY(tick.labelRect.width() >= timeline.fontMetrics().horizontalAdvance(tick.label));
        hasRightLabel |= tick.labelRect.right() > timeline.viewport()->width() * 3 / 4;
      }
      QVERIFY(hasRightLabel);
      timeline.fitTime();
    }
  }

  // In the Timeline tab of a 1280x720 window (the timeline beside the histogram), the header
  // flows onto lines instead of being cut: every text in it is whole and inside the view, none
  // covers another, and the slowest rows are listed. The rows are labelled with their index in
  // a gutter at the left, the bars right of it.
  void headerFitsAt1280AndRowsAreLabelled() {
    QStandardPaths::setTestModeEnabled(true);
    sluice::ui::MainWindow window;
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto* panel = window.findChild<sluice::ui::TimelinePanel*>();
    QVERIFY(panel);
    window.tabs()->setCurrentWidget(panel);
    panel->addRows(longRun(2000));
    QCoreApplication::processEvents();
    RequestTimelineWidget* timeline = panel->timeline();
    const int width = timeline->viewport()->width();
    QVERIFY2(width < 900, qPrintable(QString::number(width)));  // narrower than the window

    const auto texts = timeline->headerTexts();
    int numListed = 0;
    for (int i = 0; i < texts.size(); ++i) {
      const auto& text = texts[i];
      QVERIFY2(!text.text.endsWith(QChar(0x2026)), qPrintable("cut: " + text.text));
      QVERIFY2(text.rect.left() >= 0 && text.rect.right() < width,
               qPrintable(QString("%1 at %2..%3 of %4")
                              .arg(text.text)
                              .arg(text.rect.left())
                              .arg(text.rect.right())
                              .arg(width)));
      QVERIFY(text.rect.width() >= timeline->fontMetrics().horizontalAdvance(text.text));
      for (int j = 0; j < i; ++j)
        QVERIFY2(!text.rect.intersects(texts[j].rect),
                 qPrintable(text.text + " covers " + texts[j].text));
      // Every 20th row from row 7 on takes 5.1 s to generate: the slowest.
      if (text.text.startsWith("row ")) {
        ++numListed;
        QVERIFY2(text.text.endsWith(": 5.10 s") &&
                     text.text.section(' ', 1, 1).remove(':').toInt() % 20 == 7,
                 qPrintable(text.text));
      }
    }
    QCOMPARE(numListed, RequestTimelineWidget::kNumListedSlowest);
    QVERIFY(texts.first().text == "queued");
    // The time labels lie below the header's texts.
    for (const auto& tick : timeline->timeTicks()) {
      if (tick.label.isEmpty()) continue;
      for (const auto& text : texts) QVERIFY(!tick.labelRect.intersects(text.rect));
      QVERIFY(tick.labelRect.left() >= timeline->gutterWidth());
    }

    // The overview (several rows per line) labels its first line: row 0.
    QVERIFY(timeline->rowsPerLine() > 1);
    QVERIFY(!timeline->rowLabels().isEmpty());
    QCOMPARE(timeline->rowLabels().first().text, QString("0"));
    timeline->setRowsPerLine(1);  // one row per line, following the newest
    QCoreApplication::processEvents();
    const auto labels = timeline->rowLabels();
    QVERIFY2(labels.size() >= 5, qPrintable(QString::number(labels.size())));
    QVERIFY(timeline->gutterWidth() > timeline->fontMetrics().horizontalAdvance("1999"));
    for (int i = 0; i < labels.size(); ++i) {
      const QRect rect = labels[i].rect;
      QVERIFY(rect.left() >= 0 && rect.right() < timeline->gutterWidth());
      QVERIFY(rect.width() >= timeline->fontMetrics().horizontalAdvance(labels[i].text));
      if (i > 0) QVERIFY(rect.top() > labels[i - 1].rect.bottom());
      // The label names the row drawn on its line (longRun's row i has index i).
      const int position = timeline->rowAt(QPoint(timeline->gutterWidth() + 5, rect.center().y()));
      QCOMPARE(labels[i].text, QString::number(position));
    }
    QCOMPARE(labels.last().text.toInt() / 10, 1999 / 10);  // the newest rows are in view
    for (const int position : {0, 1000, 1999})
      QVERIFY(timeline->barRect(position).left() >= timeline->gutterWidth());
    QVERIFY(sluice::test::saveShot(window, "timeline-1280x720"));
  }

  void panelShowsOutputLengths() {
    sluice::ui::TimelinePanel panel;
    panel.resize(900, 400);
    QVector<RowSnapshot> rows = longRun(1000);
    panel.addRows(rows.mid(0, 100));
    QTest::qWait(700);  // hidden (another tab): the histogram waits to be seen
    QCOMPARE(panel.outputLengths()->stats().count, 0);
    rows.remove(0, 100);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QCOMPARE(panel.outputLengths()->stats().count, 100);
    rows[105].output.clear();  // a failed row without output is not a length
    rows[105].outputTokens = 0;
    for (int start = 0; start < rows.size(); start += 100) panel.addRows(rows.mid(start, 100));
    QCOMPARE(panel.timeline()->rowCount(), 1000);
    QTRY_COMPARE_WITH_TIMEOUT(panel.outputLengths()->stats().count, 999, 5000);
    QCOMPARE(panel.outputLengths()->stats().max, 209);
    QVERIFY2(panel.outputLengths()->summaryText().startsWith("999 outputs"),
             qPrintable(panel.outputLengths()->summaryText()));
    panel.clear();
    QCOMPARE(panel.timeline()->rowCount(), 0);
    QCOMPARE(panel.outputLengths()->stats().count, 0);
  }
};

QTEST_MAIN(TimelineTest)
#include "timeline_test.moc"
