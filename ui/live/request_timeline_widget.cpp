#include "ui/live/request_timeline_widget.h"

#include <QEvent>
#include <QHelpEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <functional>

#include "ui/common/run_view_palette.h"

namespace sluice::ui {

namespace {

namespace palette = run_view_palette;

constexpr int kPadPx = 8;            // left and right of the time axis
constexpr int kSlowMarkerPx = 3;     // red mark at the gutter's right edge for slow rows
constexpr int kGutterPadPx = 6;      // around the row labels
constexpr int kPieceSpacingPx = 12;  // between the header's pieces on a line
constexpr int kMaxSummaryLines = 2;  // the slowest rows listed on at most this many lines
constexpr int kMinTickSpacingPx = 70;
constexpr double kMaxPxPerS = 2000.0;
constexpr double kWheelZoomStep = 1.25;

QString formatMs(double ms) {
  if (ms < 1000.0) return QString("%1 ms").arg(ms, 0, 'f', 0);
  if (ms < 60000.0) return QString("%1 s").arg(ms / 1000.0, 0, 'f', 2);
  const int minutes = static_cast<int>(ms / 60000.0);
  return QString("%1 min %2 s").arg(minutes).arg((ms - minutes * 60000.0) / 1000.0, 0, 'f', 0);
}

// Returns a 1, 2 or 5 times a power of ten step of at least minStep.
double niceStep(double minStep) {
  const double base = std::pow(10.0, std::floor(std::log10(minStep)));
  for (double multiple : {1.0, 2.0, 5.0})
    if (multiple * base >= minStep) return multiple * base;
  return 10.0 * base;
}

}  // namespace

RequestTimelineWidget::RequestTimelineWidget(QWidget* parent) : QAbstractScrollArea(parent) {
  setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
  updateScrollBars();
}

void RequestTimelineWidget::addRows(const QVector<sluice::RowSnapshot>& rows) {
  if (rows.isEmpty()) return;
  QScrollBar* vertical = verticalScrollBar();
  const bool wasAtBottom = vertical->value() >= vertical->maximum();
  m_bars.reserve(m_bars.size() + rows.size());
  for (const RowSnapshot& row : rows) {
    // Phases must nest even when a failed row never reached its first token.
    const double totalMs = std::max(0.0, row.totalMs);
    const double queueMs = std::clamp(row.queueMs, 0.0, totalMs);
    const double ttftMs = std::clamp(row.ttftMs, queueMs, totalMs);
    Bar bar;
    bar.rowIndex = row.rowIndex;
    bar.id = row.id;
    bar.status = row.status;
    bar.finishReason = row.finishReason;
    bar.startS = row.arrivalS;
    bar.prefillS = row.arrivalS + queueMs / 1000.0;
    bar.decodeS = row.arrivalS + ttftMs / 1000.0;
    bar.endS = row.arrivalS + totalMs / 1000.0;
    bar.totalMs = totalMs;
    bar.generationMs = totalMs - queueMs;
    m_latestEndS = std::max(m_latestEndS, bar.endS);
    m_maxRowIndex = std::max(m_maxRowIndex, bar.rowIndex);
    m_bars.append(bar);
  }
  rankSlowest();
  updateScrollBars();
  if (wasAtBottom) vertical->setValue(vertical->maximum());
  viewport()->update();
}

void RequestTimelineWidget::clear() {
  m_bars.clear();
  m_latestEndS = 0.0;
  m_slowThresholdMs = 0.0;
  m_listedSlowest.clear();
  m_numSlow = 0;
  m_fitting = true;
  m_rowsPerLine = 1;
  m_fittingRows = true;
  m_maxRowIndex = 0;
  updateScrollBars();
  viewport()->update();
}

bool RequestTimelineWidget::isSlow(int position) const {
  return position >= 0 && position < rowCount() && m_bars[position].isSlow;
}

QVector<int> RequestTimelineWidget::slowestPositions() const {
  QVector<int> positions;
  for (int i = 0; i < rowCount(); ++i)
    if (m_bars[i].isSlow) positions.append(i);
  std::stable_sort(positions.begin(), positions.end(), [this](int a, int b) {
    return m_bars[a].generationMs > m_bars[b].generationMs;
  });
  return positions;
}

void RequestTimelineWidget::rankSlowest() {
  const int n = rowCount();
  m_listedSlowest.clear();
  m_numSlow = 0;
  if (n == 0) return;
  // By the row's own generation time, not its total: on a long run the last rows read wait
  // longest in the queue, and ranking by total listed just them. The k-th largest is the
  // threshold; ties with it count as slow too.
  const int k = std::max(1, static_cast<int>(std::ceil(n * kSlowFraction - 1e-9)));
  QVector<double> times;
  times.reserve(n);
  for (const Bar& bar : m_bars) times.append(bar.generationMs);
  std::nth_element(times.begin(), times.begin() + (k - 1), times.end(), std::greater<>());
  m_slowThresholdMs = times[k - 1];
  QVector<int> slow;
  for (int i = 0; i < n; ++i) {
    m_bars[i].isSlow = m_bars[i].generationMs >= m_slowThresholdMs;
    if (m_bars[i].isSlow) slow.append(i);
  }
  m_numSlow = slow.size();
  const int listed = std::min<int>(kNumListedSlowest, slow.size());
  std::partial_sort(slow.begin(), slow.begin() + listed, slow.end(), [this](int a, int b) {
    return m_bars[a].generationMs > m_bars[b].generationMs;
  });
  m_listedSlowest = slow.mid(0, listed);
}

void RequestTimelineWidget::layoutHeader() {
  const QFontMetrics metrics = fontMetrics();
  const int lineHeight = metrics.height() + 2;
  const int right = std::max(1, viewport()->width()) - kPadPx;
  m_gutterPx = metrics.horizontalAdvance(QString::number(m_maxRowIndex)) + 2 * kGutterPadPx;
  m_headerTexts.clear();
  m_legendSwatches.clear();
  const int swatch = std::min(10, lineHeight - 2);
  int x = kPadPx;
  int y = 2;
  int line = 0;
  // Places one piece (an optional swatch, then its text) after the last, or at the start of the
  // next line when it would pass the right edge; returns false where maxLine forbids that line.
  auto place = [&](const QString& text, QPalette::ColorRole role, bool hasSwatch,
                   int maxLine) -> bool {
    const int lead = hasSwatch ? swatch + 4 : 0;
    const int textWidth = metrics.horizontalAdvance(text) + 1;
    if (x > kPadPx && x + lead + textWidth > right) {
      if (line + 1 > maxLine) return false;
      x = kPadPx;
      y += lineHeight;
      ++line;
    }
    // Only a piece wider than a whole line (a very narrow view) is shortened.
    const QString shown = x + lead + textWidth > right
                              ? metrics.elidedText(text, Qt::ElideRight, right - x - lead)
                              : text;
    if (hasSwatch) m_legendSwatches.append(QRect(x, y + (lineHeight - swatch) / 2, swatch, swatch));
    const int shownWidth = metrics.horizontalAdvance(shown) + 1;
    m_headerTexts.append({QRect(x + lead, y, shownWidth, lineHeight), shown, role});
    x += lead + shownWidth + kPieceSpacingPx;
    return true;
  };
  constexpr int kAnyLine = 1 << 20;
  place("queued", QPalette::Text, true, kAnyLine);
  place("prefill", QPalette::Text, true, kAnyLine);
  place("decode", QPalette::Text, true, kAnyLine);
  place(QString("slowest %1%").arg(qRound(kSlowFraction * 100)), QPalette::Text, true, kAnyLine);
  for (const char* hint :
       {"Ctrl+wheel zooms time", "Ctrl+Shift+wheel zooms rows", "double-click: whole run"})
    place(hint, QPalette::PlaceholderText, false, kAnyLine);
  // The slowest rows start a line of their own and take at most kMaxSummaryLines.
  x = right + 1;
  const int firstSummaryLine = line + 1;
  place(slowestHead(), QPalette::Text, false, kAnyLine);
  for (int position : m_listedSlowest) {
    const QString text = QString("row %1: %2")
                             .arg(m_bars[position].rowIndex)
                             .arg(formatMs(m_bars[position].generationMs));
    if (!place(text, QPalette::Text, false, firstSummaryLine + kMaxSummaryLines - 1)) break;
  }
  // The time labels take the header's last line.
  m_headerHeightPx = y + lineHeight + metrics.height() + 4;
}

double RequestTimelineWidget::timeToX(double seconds) const {
  return m_gutterPx + kPadPx + seconds * m_pxPerS - horizontalScrollBar()->value();
}

void RequestTimelineWidget::updateScrollBars() {
  layoutHeader();
  const int areaHeight = std::max(1, viewport()->height() - headerHeight());
  const int width = std::max(1, viewport()->width());
  const double fitPxPerS =
      std::max(1, width - m_gutterPx - 2 * kPadPx) / std::max(m_latestEndS, 1.0);
  if (m_fitting) m_pxPerS = fitPxPerS;
  if (m_fittingRows) m_rowsPerLine = fitRowsPerLine();
  QScrollBar* vertical = verticalScrollBar();
  vertical->setRange(0, std::max(0, lineCount() * rowPitch() - areaHeight));
  vertical->setPageStep(areaHeight);
  vertical->setSingleStep(3 * rowPitch());
  QScrollBar* horizontal = horizontalScrollBar();
  const double contentWidth = m_gutterPx + 2 * kPadPx + m_latestEndS * m_pxPerS;
  horizontal->setRange(0, std::max(0, static_cast<int>(std::ceil(contentWidth)) - width));
  horizontal->setPageStep(width);
  horizontal->setSingleStep(std::max(1, width / 20));
}

int RequestTimelineWidget::rowOfLine(int line) const {
  const int first = line * m_rowsPerLine;
  const int end = std::min(rowCount(), first + m_rowsPerLine);
  int slowest = first;
  for (int i = first + 1; i < end; ++i)
    if (m_bars[i].generationMs > m_bars[slowest].generationMs) slowest = i;
  return slowest;
}

int RequestTimelineWidget::fitRowsPerLine() const {
  const int numLinesFit = std::max(1, (viewport()->height() - headerHeight()) / rowPitch());
  return std::max(1, (rowCount() + numLinesFit - 1) / numLinesFit);
}

int RequestTimelineWidget::rowAt(const QPoint& viewportPoint) const {
  const int y = viewportPoint.y() - headerHeight();
  if (y < 0 || viewportPoint.y() >= viewport()->height()) return -1;
  const int line = (y + verticalScrollBar()->value()) / rowPitch();
  return line < lineCount() ? rowOfLine(line) : -1;
}

QRect RequestTimelineWidget::barRect(int position) const {
  if (position < 0 || position >= rowCount()) return {};
  const Bar& bar = m_bars[position];
  const int x0 = static_cast<int>(std::floor(timeToX(bar.startS)));
  const int x1 = std::max(x0 + 1, static_cast<int>(std::ceil(timeToX(bar.endS))));
  const int line = position / m_rowsPerLine;
  const int y = headerHeight() + line * rowPitch() - verticalScrollBar()->value();
  return QRect(x0, y, x1 - x0, m_rowHeightPx);
}

QString RequestTimelineWidget::describeAt(const QPoint& viewportPoint) const {
  const int position = rowAt(viewportPoint);
  if (position < 0) return {};
  const Bar& bar = m_bars[position];
  QString text = QString("row %1").arg(bar.rowIndex);
  if (!bar.id.isEmpty()) text += QString(" · id %1").arg(bar.id);
  text += QString(" · %1").arg(bar.status.isEmpty() ? "done" : bar.status);
  if (!bar.finishReason.isEmpty()) text += QString(" (%1)").arg(bar.finishReason);
  text += QString("\nqueued %1 · prefill %2 · decode %3 · total %4")
              .arg(formatMs((bar.prefillS - bar.startS) * 1000.0))
              .arg(formatMs((bar.decodeS - bar.prefillS) * 1000.0))
              .arg(formatMs((bar.endS - bar.decodeS) * 1000.0))
              .arg(formatMs(bar.totalMs));
  if (m_rowsPerLine > 1) {
    const int first = position / m_rowsPerLine * m_rowsPerLine;
    text += QString("\nthe slowest of rows at %1–%2 (%3 per line: Ctrl+Shift+wheel zooms in)")
                .arg(first + 1)
                .arg(std::min(rowCount(), first + m_rowsPerLine))
                .arg(m_rowsPerLine);
  }
  text += QString("\narrived at %1 s").arg(bar.startS, 0, 'f', 2);
  if (bar.isSlow) text += QString(" · among the slowest %1%").arg(qRound(kSlowFraction * 100));
  return text;
}

void RequestTimelineWidget::scrollToRow(int position) {
  if (position < 0 || position >= rowCount()) return;
  if (m_rowsPerLine > 1) setRowsPerLine(1);
  const int areaHeight = std::max(1, viewport()->height() - headerHeight());
  const int top = position * rowPitch();
  QScrollBar* vertical = verticalScrollBar();
  if (top < vertical->value()) vertical->setValue(top);
  if (top + rowPitch() > vertical->value() + areaHeight)
    vertical->setValue(top + rowPitch() - areaHeight);
  const QRect bar = barRect(position);
  if (bar.right() < 0 || bar.left() > viewport()->width())
    horizontalScrollBar()->setValue(horizontalScrollBar()->value() + bar.left() - kPadPx -
                                    m_gutterPx);
  viewport()->update();
}

void RequestTimelineWidget::setRowHeight(int px) {
  Q_ASSERT_X(px >= 2, "setRowHeight", "a bar needs at least two pixels");
  const int firstVisible = verticalScrollBar()->value() / rowPitch();
  m_rowHeightPx = px;
  updateScrollBars();
  verticalScrollBar()->setValue(firstVisible * rowPitch());
  viewport()->update();
}

void RequestTimelineWidget::setRowsPerLine(int rows) {
  Q_ASSERT_X(rows >= 1, "setRowsPerLine", "a line shows at least one row");
  QScrollBar* vertical = verticalScrollBar();
  const bool wasAtBottom = vertical->value() >= vertical->maximum();  // keeps following
  const int firstRow = vertical->value() / rowPitch() * m_rowsPerLine;
  m_fittingRows = false;
  m_rowsPerLine = rows;
  updateScrollBars();
  vertical->setValue(wasAtBottom ? vertical->maximum() : firstRow / m_rowsPerLine * rowPitch());
  viewport()->update();
}

void RequestTimelineWidget::fitRows() {
  m_fittingRows = true;
  updateScrollBars();
  verticalScrollBar()->setValue(0);
  viewport()->update();
}

void RequestTimelineWidget::fitWholeRun() {
  fitTime();
  fitRows();
}

// Zooming in merges fewer rows into a line, then makes rows taller; zooming out the reverse,
// down to the whole run.
void RequestTimelineWidget::zoomRows(double notches) {
  const int steps = static_cast<int>(std::lround(notches));
  if (steps > 0 && m_rowsPerLine > 1) {
    setRowsPerLine(std::max(1, static_cast<int>(m_rowsPerLine / std::pow(1.5, steps))));
  } else if (steps > 0 || m_rowHeightPx + steps >= 2) {
    setRowHeight(std::clamp(m_rowHeightPx + steps, 2, 40));
  } else if (steps < 0) {
    const int grown = static_cast<int>(std::ceil(m_rowsPerLine * std::pow(1.5, -steps)));
    setRowsPerLine(std::min(std::max(m_rowsPerLine + 1, grown), fitRowsPerLine()));
  }
}

void RequestTimelineWidget::zoomTime(double factor, int anchorX) {
  const int width = std::max(1, viewport()->width());
  const int origin = m_gutterPx + kPadPx;  // where time 0 lies, unscrolled
  const double fitPxPerS =
      std::max(1, width - m_gutterPx - 2 * kPadPx) / std::max(m_latestEndS, 1.0);
  const double anchorS = (anchorX + horizontalScrollBar()->value() - origin) / m_pxPerS;
  // Never zoom out past the whole run: that is what fitting shows.
  m_pxPerS = std::clamp(m_pxPerS * factor, fitPxPerS, std::max(fitPxPerS, kMaxPxPerS));
  m_fitting = m_pxPerS <= fitPxPerS;
  updateScrollBars();
  horizontalScrollBar()->setValue(qRound(anchorS * m_pxPerS + origin - anchorX));
  viewport()->update();
}

void RequestTimelineWidget::fitTime() {
  m_fitting = true;
  updateScrollBars();
  horizontalScrollBar()->setValue(0);
  viewport()->update();
}

bool RequestTimelineWidget::viewportEvent(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QAbstractScrollArea::viewportEvent(event);
  const auto* help = static_cast<QHelpEvent*>(event);
  const QString text = describeAt(help->pos());
  if (text.isEmpty()) {
    QToolTip::hideText();
    event->ignore();
  } else {
    QToolTip::showText(help->globalPos(), text, viewport());
  }
  return true;
}

void RequestTimelineWidget::resizeEvent(QResizeEvent* event) {
  QAbstractScrollArea::resizeEvent(event);
  updateScrollBars();
}

void RequestTimelineWidget::wheelEvent(QWheelEvent* event) {
  if (!(event->modifiers() & Qt::ControlModifier)) {
    QAbstractScrollArea::wheelEvent(event);
    return;
  }
  // Some platforms turn Shift+wheel into a horizontal delta.
  const QPoint angle = event->angleDelta();
  const double notches = (angle.y() != 0 ? angle.y() : angle.x()) / 120.0;
  if (event->modifiers() & Qt::ShiftModifier)
    zoomRows(notches);
  else
    zoomTime(std::pow(kWheelZoomStep, notches), qRound(event->position().x()));
  event->accept();
}

void RequestTimelineWidget::mouseDoubleClickEvent(QMouseEvent* /*event*/) {
  fitWholeRun();
}

void RequestTimelineWidget::scrollContentsBy(int /*dx*/, int /*dy*/) {
  viewport()->update();
}

void RequestTimelineWidget::paintEvent(QPaintEvent* /*event*/) {
  QPainter painter(viewport());
  painter.fillRect(viewport()->rect(), palette().color(QPalette::Base));
  paintTimeAxis(painter, headerHeight() - 2, viewport()->height());
  paintRows(painter);
  paintRowLabels(painter);
  paintHeader(painter);
}

void RequestTimelineWidget::paintRows(QPainter& painter) const {
  const int top = headerHeight();
  const int scroll = verticalScrollBar()->value();
  const int first = scroll / rowPitch();
  const int last = std::min(lineCount() - 1, (scroll + viewport()->height() - top) / rowPitch());
  painter.save();
  painter.setClipRect(
      QRect(m_gutterPx, top, viewport()->width() - m_gutterPx, viewport()->height() - top));
  for (int line = first; line <= last; ++line)
    paintBar(painter, m_bars[rowOfLine(line)], top + line * rowPitch() - scroll);
  painter.restore();
}

void RequestTimelineWidget::paintBar(QPainter& painter, const Bar& bar, int y) const {
  const double x0 = timeToX(bar.startS);
  const double x3 = std::max(timeToX(bar.endS), x0 + 1.0);  // even an instant row stays visible
  if (x3 < m_gutterPx || x0 > viewport()->width()) return;  // the gutter's mark stays
  const double x1 = timeToX(bar.prefillS);
  const double x2 = timeToX(bar.decodeS);
  const double h = m_rowHeightPx;
  painter.fillRect(QRectF(x0, y, x1 - x0, h), palette::queuedColour());
  painter.fillRect(QRectF(x1, y, x2 - x1, h), palette::prefillColour());
  painter.fillRect(QRectF(x2, y, x3 - x2, h), palette::decodeColour());
  if (!bar.status.isEmpty() && bar.status != "done")  // failed or skipped: a mark at the end
    painter.fillRect(QRectF(x3 - 2, y, 2, h), palette().color(QPalette::Text));
  if (bar.isSlow) {
    painter.setPen(QPen(palette::slowOutlineColour(), 1));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(QRectF(x0 - 1, y - 1, x3 - x0 + 1, h + 1));
  }
}

QVector<RequestTimelineWidget::TimeTick> RequestTimelineWidget::timeTicks() const {
  QVector<TimeTick> ticks;
  const double step = niceStep(kMinTickSpacingPx / m_pxPerS);
  const int decimals = step < 1.0 ? static_cast<int>(std::ceil(-std::log10(step))) : 0;
  const double firstS = std::floor(-timeToX(0.0) / m_pxPerS / step) * step;
  const int labelTop = headerHeight() - 2 - fontMetrics().height();
  const int width = viewport()->width();
  for (double t = std::max(0.0, firstS); timeToX(t) <= width; t += step) {
    if (timeToX(t) < m_gutterPx) continue;
    TimeTick tick;
    tick.seconds = t;
    tick.x = qRound(timeToX(t));
    tick.label = QString("%1 s").arg(t, 0, 'f', decimals);
    const int textWidth = fontMetrics().horizontalAdvance(tick.label) + 1;
    // Right of the tick; moved in where the right edge would cut it, and left out where it
    // would then cover the previous label or the left edge cuts it (the grid line stays).
    const int left = std::min(tick.x + 2, width - textWidth);
    if (left < m_gutterPx || (!ticks.isEmpty() && left <= ticks.back().labelRect.right() + 4))
      tick.label.clear();
    tick.labelRect =
        tick.label.isEmpty() ? QRect() : QRect(left, labelTop, textWidth, fontMetrics().height());
    ticks.append(tick);
  }
  return ticks;
}

void RequestTimelineWidget::paintTimeAxis(QPainter& painter, int top, int bottom) const {
  for (const TimeTick& tick : timeTicks()) {
    painter.setPen(palette::gridColour(palette()));
    painter.drawLine(tick.x, top, tick.x, bottom);
    if (tick.label.isEmpty()) continue;
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(tick.labelRect, Qt::AlignLeft | Qt::AlignVCenter, tick.label);
  }
}

void RequestTimelineWidget::paintHeader(QPainter& painter) const {
  // The time labels are drawn in the header's last line by paintTimeAxis; keep them, cover the
  // rest.
  const int timeLabelsTop = headerHeight() - fontMetrics().height() - 4;
  painter.fillRect(QRect(0, 0, viewport()->width(), timeLabelsTop),
                   palette().color(QPalette::Base));
  for (int i = 0; i < m_legendSwatches.size(); ++i) {
    const QRect box = m_legendSwatches[i];
    if (i == m_legendSwatches.size() - 1) {  // the slowest rows: an outline, as on their bars
      painter.setPen(QPen(palette::slowOutlineColour(), 1));
      painter.setBrush(Qt::NoBrush);
      painter.drawRect(box.adjusted(0, 0, -1, -1));
    } else {
      const QColor colours[] = {palette::queuedColour(), palette::prefillColour(),
                                palette::decodeColour()};
      painter.fillRect(box, colours[std::min(i, 2)]);
    }
  }
  for (const PlacedText& text : m_headerTexts) {
    painter.setPen(palette().color(text.role));
    painter.drawText(text.rect, Qt::AlignLeft | Qt::AlignVCenter, text.text);
  }
  painter.setPen(palette::gridColour(palette()));
  painter.drawLine(0, headerHeight() - 1, viewport()->width(), headerHeight() - 1);
}

QVector<RequestTimelineWidget::PlacedText> RequestTimelineWidget::rowLabels() const {
  QVector<PlacedText> labels;
  if (rowCount() == 0) return labels;
  const int textHeight = fontMetrics().height();
  // Every k-th line, k lines being at least a label high: labels never touch.
  const int every = std::max(1, (textHeight + rowPitch() - 1) / rowPitch());
  const int top = headerHeight();
  const int scroll = verticalScrollBar()->value();
  const int first = scroll / rowPitch() / every * every;
  for (int line = first; line < lineCount(); line += every) {
    const int lineTop = top + line * rowPitch() - scroll;
    if (lineTop < top) continue;  // scrolled under the header
    // Centred on its line, but never above the rows (the first line's label would be cut).
    const int y = std::max(top, lineTop + m_rowHeightPx / 2 - textHeight / 2);
    if (y + textHeight > viewport()->height()) break;
    if (!labels.isEmpty() && y <= labels.back().rect.bottom()) continue;
    labels.append({QRect(0, y, m_gutterPx - kGutterPadPx, textHeight),
                   QString::number(m_bars[line * m_rowsPerLine].rowIndex), QPalette::Text});
  }
  return labels;
}

void RequestTimelineWidget::paintRowLabels(QPainter& painter) const {
  const int top = headerHeight();
  painter.fillRect(QRect(0, top, m_gutterPx, viewport()->height() - top),
                   palette().color(QPalette::Window));
  // Slow rows are marked at the gutter's edge, so they stand out when their bars are scrolled
  // away.
  const int scroll = verticalScrollBar()->value();
  const int firstLine = scroll / rowPitch();
  const int lastLine =
      std::min(lineCount() - 1, (scroll + viewport()->height() - top) / rowPitch());
  painter.save();
  painter.setClipRect(QRect(0, top, m_gutterPx, viewport()->height() - top));
  for (int line = firstLine; line <= lastLine; ++line) {
    if (m_bars[rowOfLine(line)].isSlow)
      painter.fillRect(m_gutterPx - kSlowMarkerPx, top + line * rowPitch() - scroll, kSlowMarkerPx,
                       m_rowHeightPx, palette::slowOutlineColour());
  }
  painter.setPen(palette().color(QPalette::PlaceholderText));
  for (const PlacedText& label : rowLabels())
    painter.drawText(label.rect, Qt::AlignRight | Qt::AlignVCenter, label.text);
  painter.restore();
  painter.setPen(palette::gridColour(palette()));
  painter.drawLine(m_gutterPx - 1, top, m_gutterPx - 1, viewport()->height());
}

QString RequestTimelineWidget::slowestHead() const {
  if (m_bars.isEmpty()) return "No finished rows yet.";
  return QString("Slowest %1% by generation time: %2 of %3 rows ≥ %4 —")
      .arg(qRound(kSlowFraction * 100))
      .arg(m_numSlow)
      .arg(rowCount())
      .arg(formatMs(m_slowThresholdMs));
}

}  // namespace sluice::ui
