// A Gantt-style timeline of finished requests: one bar per row, split into its queued, prefill
// and decode phases, x = seconds since the engine started, newest row at the bottom. Only the
// lines inside the viewport are painted, so thousands of rows scroll smoothly. The slowest 5% by
// their own generation time (first scheduled -> finished: a row that only waited long in the
// queue is not slow) are outlined in red and the slowest of them are listed in the header.
//
// Long runs: a line can stand for several rows (rowsPerLine), drawn as the slowest of them, so
// the whole run fits the viewport; that is where a run starts, and fitWholeRun (a double-click)
// goes back to it. Zooming in on rows goes to one row per line and then to taller rows.
// Ctrl+wheel zooms the time axis around the cursor, Ctrl+Shift+wheel zooms the rows. While the
// view is scrolled to the bottom it follows the newest rows.
//
// Lines are labelled in a gutter at the left with the row index of their (first) row, as many as
// fit without touching. The header (legend, hint, the slowest rows) flows onto as many lines as
// the width needs, whole pieces at a time: nothing in it is cut at a narrow width.
#pragma once

#include <QAbstractScrollArea>
#include <QPalette>
#include <QString>
#include <QVector>

#include "app/run_snapshots.h"

namespace sluice::ui {

class RequestTimelineWidget final : public QAbstractScrollArea {
  Q_OBJECT

 public:
  static constexpr double kSlowFraction = 0.05;
  static constexpr int kNumListedSlowest = 5;

  explicit RequestTimelineWidget(QWidget* parent = nullptr);

  // Appends finished rows (in the order given) and re-ranks the slowest.
  void addRows(const QVector<sluice::RowSnapshot>& rows);
  // Forgets every row (a new run).
  void clear();

  int rowCount() const { return static_cast<int>(m_bars.size()); }
  // Returns whether the row at a timeline position (0 = first added) is among the slowest.
  bool isSlow(int position) const;
  // Returns the timeline positions of the slowest rows, slowest first.
  QVector<int> slowestPositions() const;
  // Returns the generation time (ms, first scheduled -> finished) from which a row counts as
  // slow; 0 when there are no rows.
  double slowThresholdMs() const { return m_slowThresholdMs; }

  // Returns the position of the row under a viewport point (the row its line shows), or -1.
  int rowAt(const QPoint& viewportPoint) const;
  // Returns the tooltip for a viewport point: row id, status and the three phase durations.
  QString describeAt(const QPoint& viewportPoint) const;
  // Returns the bar of a row (of its line) in viewport coordinates (may lie outside the viewport).
  QRect barRect(int position) const;
  // Shows one row per line and scrolls so that a row is visible.
  void scrollToRow(int position);

  int rowHeight() const { return m_rowHeightPx; }
  // Precondition: px >= 2.
  void setRowHeight(int px);
  // Multiplies the time scale by factor, keeping the time under viewport x anchorX in place.
  void zoomTime(double factor, int anchorX);
  // Fits the whole run into the viewport's width and keeps fitting as rows arrive.
  void fitTime();
  // Rows each line stands for (1: one row per line).
  int rowsPerLine() const { return m_rowsPerLine; }
  // Precondition: rows >= 1. Stops fitting the rows; a view at the bottom stays there.
  void setRowsPerLine(int rows);
  // Fits every row into the viewport's height (several rows per line when needed) and keeps
  // fitting as rows arrive, until the rows are zoomed or scrolled to one.
  void fitRows();
  // fitTime() and fitRows(): the whole run at a glance.
  void fitWholeRun();

  // A time-axis tick and its label, in viewport coordinates.
  struct TimeTick {
    double seconds = 0.0;
    int x = 0;
    QRect labelRect;
    QString label;
  };
  // Returns the ticks painted for the current scale and scroll. Every label lies inside the
  // viewport: one the edge would cut is moved in, or left out ("" and an empty rect) where it
  // would then cover the label before it.
  QVector<TimeTick> timeTicks() const;

  // A text painted in the header or the row gutter, in viewport coordinates.
  struct PlacedText {
    QRect rect;
    QString text;
    QPalette::ColorRole role = QPalette::Text;  // PlaceholderText for the hint
  };
  // Returns the header's texts (legend entries, hint, the slowest rows' summary) as painted.
  QVector<PlacedText> headerTexts() const { return m_headerTexts; }
  // Returns the row labels painted for the lines in view (row index of each labelled line's
  // first row), top to bottom.
  QVector<PlacedText> rowLabels() const;
  // Returns the width of the row-label gutter; bars and time ticks lie right of it.
  int gutterWidth() const { return m_gutterPx; }
  QSize sizeHint() const override { return {520, 320}; }

 protected:
  bool viewportEvent(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void scrollContentsBy(int dx, int dy) override;

 private:
  struct Bar {
    qint64 rowIndex = 0;
    QString id;
    QString status;
    QString finishReason;
    double startS = 0.0;    // arrival
    double prefillS = 0.0;  // first scheduled
    double decodeS = 0.0;   // first token
    double endS = 0.0;      // finished
    double totalMs = 0.0;
    double generationMs = 0.0;  // first scheduled -> finished: what the slow ranking uses
    bool isSlow = false;
  };

  int headerHeight() const { return m_headerHeightPx; }
  // Flows the header's pieces into lines at the viewport's width (m_headerTexts, the height)
  // and sizes the gutter for the largest row index.
  void layoutHeader();
  int rowPitch() const { return m_rowHeightPx + 1; }
  int lineCount() const { return (rowCount() + m_rowsPerLine - 1) / m_rowsPerLine; }
  // Returns the row a line shows: its slowest by generation time.
  int rowOfLine(int line) const;
  int fitRowsPerLine() const;
  void zoomRows(double notches);
  double timeToX(double seconds) const;
  void rankSlowest();
  void updateScrollBars();
  void paintHeader(QPainter& painter) const;
  void paintRowLabels(QPainter& painter) const;
  void paintTimeAxis(QPainter& painter, int top, int bottom) const;
  void paintRows(QPainter& painter) const;
  void paintBar(QPainter& painter, const Bar& bar, int y) const;
  QString slowestHead() const;

  QVector<Bar> m_bars;
  double m_latestEndS = 0.0;
  double m_slowThresholdMs = 0.0;
  QVector<int> m_listedSlowest;  // the few slowest, for the header
  int m_numSlow = 0;
  int m_rowHeightPx = 7;
  double m_pxPerS = 1.0;
  bool m_fitting = true;
  int m_rowsPerLine = 1;
  bool m_fittingRows = true;  // a long run is seen whole until the rows are zoomed
  qint64 m_maxRowIndex = 0;
  int m_gutterPx = 0;
  int m_headerHeightPx = 0;
  QVector<PlacedText> m_headerTexts;
  QVector<QRect> m_legendSwatches;  // beside the legend's texts; the last one is outlined
};

}  // namespace sluice::ui
