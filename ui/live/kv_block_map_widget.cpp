#include "ui/live/kv_block_map_widget.h"

#include <QEvent>
#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "ui/common/number_format.h"
#include "ui/common/run_view_palette.h"

namespace sluice::ui {

namespace {

namespace palette = run_view_palette;

constexpr int kMargin = 4;
constexpr int kMaxCellPx = 32;    // a tiny pool should not turn into a few huge tiles
constexpr int kMinGapCellPx = 4;  // from this size on, cells get a 1 px gap so the grid shows
constexpr int kSwatchPx = 10;

int stateIndex(KvBlockState state) {
  return static_cast<int>(state);
}

QString stateName(KvBlockState state) {
  switch (state) {
    case KvBlockState::Free:
      return "free";
    case KvBlockState::CachedFree:
      return "cached";
    case KvBlockState::Owned:
      return "owned";
    case KvBlockState::Shared:
      return "shared";
  }
  return "unknown";
}

}  // namespace

KvBlockMapWidget::KvBlockMapWidget(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void KvBlockMapWidget::setMap(const sluice::KvBlockMap& map) {
  m_states = map.states;
  m_ownerRows = map.owner_rows;
  m_ownerRows.resize(m_states.size(), -1);  // a short owner list must not be read past its end
  m_blockSize = map.block_size;
  m_stateSlotsText =
      map.num_state_slots > 0
          ? QString("state slots %1 / %2 used · %3 checkpoints · %4 MiB each")
                .arg(formatCount(map.num_state_slots_used), formatCount(map.num_state_slots),
                     formatCount(map.num_state_checkpoints))
                .arg(static_cast<double>(map.state_slot_bytes) / (1 << 20), 0, 'f', 1)
          : QString();
  m_counts.fill(0);
  for (KvBlockState state : m_states) {
    const int index = stateIndex(state);
    if (index < int(m_counts.size())) ++m_counts[index];  // an unknown state is drawn as free
  }
  layoutGrid();
  m_imageDirty = true;
  update();
}

int KvBlockMapWidget::count(sluice::KvBlockState state) const {
  return m_counts[stateIndex(state)];
}

int KvBlockMapWidget::blockAt(const QPoint& point) const {
  const QRect& target = m_grid.target;
  if (m_grid.cols <= 0 || !target.contains(point)) return -1;
  const int64_t col = int64_t(point.x() - target.x()) * m_grid.cols / target.width();
  const int64_t row = int64_t(point.y() - target.y()) * m_grid.rows / target.height();
  const int64_t id = row * m_grid.cols + col;
  return id < int64_t(m_states.size()) ? static_cast<int>(id) : -1;
}

QString KvBlockMapWidget::describeAt(const QPoint& point) const {
  const int id = blockAt(point);
  if (id < 0) return {};
  const KvBlockState state = m_states[id];
  const int64_t row = m_ownerRows[id];
  if ((state == KvBlockState::Owned || state == KvBlockState::Shared) && row >= 0)
    return QString("block %1 · row %2 · %3").arg(id).arg(row).arg(stateName(state));
  if (state == KvBlockState::CachedFree)
    return QString("block %1 · cached (free, holds a revivable prefix)").arg(id);
  return QString("block %1 · %2").arg(id).arg(stateName(state));
}

QRect KvBlockMapWidget::cellRect(int blockId) const {
  if (blockId < 0 || blockId >= blockCount() || m_grid.cols <= 0) return {};
  const int col = blockId % m_grid.cols;
  const int row = blockId / m_grid.cols;
  const QRect& t = m_grid.target;
  auto edge = [](int origin, int length, int index, int count) {
    return origin + static_cast<int>(int64_t(length) * index / count);
  };
  const int x0 = edge(t.x(), t.width(), col, m_grid.cols);
  const int x1 = edge(t.x(), t.width(), col + 1, m_grid.cols);
  const int y0 = edge(t.y(), t.height(), row, m_grid.rows);
  const int y1 = edge(t.y(), t.height(), row + 1, m_grid.rows);
  return QRect(x0, y0, std::max(1, x1 - x0), std::max(1, y1 - y0));
}

bool KvBlockMapWidget::event(QEvent* event) {
  if (event->type() != QEvent::ToolTip) return QWidget::event(event);
  const auto* help = static_cast<QHelpEvent*>(event);
  const QString text = describeAt(help->pos());
  if (text.isEmpty()) {
    QToolTip::hideText();
    event->ignore();
  } else {
    QToolTip::showText(help->globalPos(), text, this, cellRect(blockAt(help->pos())));
  }
  return true;
}

void KvBlockMapWidget::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  layoutGrid();
  m_imageDirty = true;
}

void KvBlockMapWidget::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) {
    layoutGrid();
    m_imageDirty = true;
    update();
  }
}

int KvBlockMapWidget::legendHeight() const {
  // The legend wraps when narrow; measuring it paints nothing.
  return paintLegend(nullptr);
}

void KvBlockMapWidget::layoutGrid() {
  m_grid = Grid{};
  const int n = blockCount();
  const int top = kMargin + legendHeight() + kMargin;
  const int width = this->width() - 2 * kMargin;
  const int height = this->height() - top - kMargin;
  if (n == 0 || width <= 0 || height <= 0) return;
  const double pixelsPerBlock = double(width) * height / n;
  // The largest square cell that fits: cells * cell area cannot exceed the area.
  for (int cell = std::min<int>(kMaxCellPx, std::sqrt(pixelsPerBlock)); cell >= 1; --cell) {
    const int cols = std::min(n, width / cell);
    const int rows = (n + cols - 1) / cols;
    if (rows * cell > height) continue;
    m_grid = Grid{cols, rows, cell, QRect(kMargin, top, cols * cell, rows * cell)};
    return;
  }
  // More blocks than pixels: one pixel per block with the area's aspect ratio, drawn scaled down.
  const int cols = std::max(1, static_cast<int>(std::ceil(std::sqrt(double(n) * width / height))));
  const int rows = (n + cols - 1) / cols;
  const double scale = std::min(double(width) / cols, double(height) / rows);
  m_grid =
      Grid{cols, rows, 0,
           QRect(kMargin, top, std::max(1, int(cols * scale)), std::max(1, int(rows * scale)))};
}

void KvBlockMapWidget::renderImage() {
  m_imageDirty = false;
  if (m_grid.cols <= 0) {
    m_image = QImage();
    return;
  }
  const int cell = std::max(1, m_grid.cellPx);
  const int gap = cell >= kMinGapCellPx ? 1 : 0;
  const QColor base = palette().color(QPalette::Base);
  // With gaps between cells, free cells get a faint tint so the pool's extent stays visible.
  const QRgb freeRgb =
      gap ? palette::blend(base, palette().color(QPalette::Text), 0.07).rgb() : base.rgb();
  const QRgb cachedRgb = palette::cachedFreeColour(palette()).rgb();
  const std::array<QRgb, 2> hatchRgb = {palette::sharedColour().rgb(),
                                        palette::sharedHatchColour().rgb()};
  m_image = QImage(m_grid.cols * cell, m_grid.rows * cell, QImage::Format_RGB32);
  m_image.fill(base);
  const int n = blockCount();
  for (int id = 0; id < n; ++id) {
    const int x0 = (id % m_grid.cols) * cell;
    const int y0 = (id / m_grid.cols) * cell;
    const KvBlockState state = m_states[id];
    const bool isShared = state == KvBlockState::Shared;
    QRgb flat = freeRgb;
    if (state == KvBlockState::CachedFree) flat = cachedRgb;
    if (state == KvBlockState::Owned)
      flat = palette::ownerColour(std::max<int64_t>(0, m_ownerRows[id]));
    for (int y = y0; y < y0 + cell - gap; ++y) {
      auto* line = reinterpret_cast<QRgb*>(m_image.scanLine(y));
      // Diagonal stripes in image coordinates, so a run of one-pixel shared blocks still
      // reads as hatched.
      for (int x = x0; x < x0 + cell - gap; ++x)
        line[x] = isShared ? hatchRgb[((x + y) & 3) < 2 ? 0 : 1] : flat;
    }
  }
}

void KvBlockMapWidget::paintSwatch(QPainter& painter, const QRect& swatch,
                                   KvBlockState state) const {
  switch (state) {
    case KvBlockState::Owned:  // owners have many colours: show two of them
      painter.fillRect(swatch.adjusted(0, 0, -swatch.width() / 2, 0),
                       QColor::fromRgb(palette::ownerColour(1)));
      painter.fillRect(swatch.adjusted(swatch.width() / 2, 0, 0, 0),
                       QColor::fromRgb(palette::ownerColour(2)));
      break;
    case KvBlockState::Shared:
      painter.fillRect(swatch, palette::sharedHatchColour());
      painter.fillRect(swatch, QBrush(palette::sharedColour(), Qt::BDiagPattern));
      break;
    case KvBlockState::CachedFree:
      painter.fillRect(swatch, palette::cachedFreeColour(palette()));
      break;
    case KvBlockState::Free:
      painter.fillRect(swatch, palette().color(QPalette::Base));
      break;
  }
  painter.setPen(palette::gridColour(palette()).darker(130));
  painter.drawRect(swatch.adjusted(0, 0, -1, -1));
}

int KvBlockMapWidget::paintLegend(QPainter* painter) const {
  const QFontMetrics metrics(font());
  const int lineHeight = std::max(metrics.height(), kSwatchPx);
  constexpr std::array<KvBlockState, 4> kOrder = {KvBlockState::Owned, KvBlockState::Shared,
                                                  KvBlockState::CachedFree, KvBlockState::Free};
  QStringList texts;
  for (KvBlockState state : kOrder)
    texts << QString("%1 %2").arg(stateName(state), formatCount(count(state)));
  texts
      << QString("%1 blocks × %2 tokens").arg(formatCount(blockCount()), formatCount(m_blockSize));
  if (!m_stateSlotsText.isEmpty()) texts << m_stateSlotsText;
  int x = kMargin;
  int y = kMargin;
  for (int i = 0; i < texts.size(); ++i) {
    const bool hasSwatch = i < int(kOrder.size());
    const int textX = hasSwatch ? kSwatchPx + 4 : 0;
    const int itemWidth = textX + metrics.horizontalAdvance(texts[i]);
    if (x > kMargin && x + itemWidth > width() - kMargin) {  // wrap onto a new line
      x = kMargin;
      y += lineHeight + 2;
    }
    if (painter) {
      if (hasSwatch)
        paintSwatch(*painter, QRect(x, y + (lineHeight - kSwatchPx) / 2, kSwatchPx, kSwatchPx),
                    kOrder[i]);
      painter->setPen(palette().color(QPalette::WindowText));
      painter->drawText(QRect(x + textX, y, itemWidth - textX, lineHeight),
                        Qt::AlignLeft | Qt::AlignVCenter, texts[i]);
    }
    x += itemWidth + 12;
  }
  return y + lineHeight - kMargin;
}

void KvBlockMapWidget::setEmptyText(const QString& text) {
  m_emptyText = text;
  update();
}

void KvBlockMapWidget::paintEvent(QPaintEvent* /*event*/) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().color(QPalette::Window));
  paintLegend(&painter);
  if (m_grid.cols <= 0) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect(), Qt::AlignCenter, m_states.empty() ? m_emptyText : "too small");
    return;
  }
  if (m_imageDirty || m_image.isNull()) renderImage();
  painter.setRenderHint(QPainter::SmoothPixmapTransform, m_grid.cellPx == 0);
  painter.drawImage(m_grid.target, m_image);
  painter.setPen(palette::gridColour(palette()));
  painter.drawRect(m_grid.target.adjusted(-1, -1, 0, 0));
}

}  // namespace sluice::ui
