// The KV pool at a glance: every block is a cell in a grid, coloured by the request (input row)
// that owns it, hatched when shared, pale when free but holding a cached prefix, empty when free.
// A legend above the grid counts each state (and a hybrid model's state slots in use). Pools reach 100k blocks, so the cells are pixels of
// one QImage, rebuilt only when the map or the size changes; when there are more blocks than
// pixels the image is drawn scaled down.
#pragma once

#include <QImage>
#include <QWidget>
#include <array>
#include <cstdint>
#include <vector>

#include "engine/kv_block_map.h"

class QPainter;

namespace sluice::ui {

class KvBlockMapWidget final : public QWidget {
  Q_OBJECT

 public:
  explicit KvBlockMapWidget(QWidget* parent = nullptr);

  // Shows a new picture of the pool. O(number of blocks); the image is redrawn on the next paint.
  void setMap(const sluice::KvBlockMap& map);
  // Sets what the widget says while it has no pool to show ("no KV pool yet"; a remote run:
  // "KV cache: on the servers, not reported").
  void setEmptyText(const QString& text);
  QString emptyText() const { return m_emptyText; }

  // Returns the block under a widget point, or -1 when the point is outside the grid.
  int blockAt(const QPoint& point) const;
  // Returns the tooltip text for a point, e.g. "block 1234 · row 57 · shared"; empty off the grid.
  QString describeAt(const QPoint& point) const;
  // Returns the widget rectangle a block is drawn in (empty when it is not shown).
  QRect cellRect(int blockId) const;
  // Returns how many blocks are in a state in the current map.
  int count(sluice::KvBlockState state) const;
  int blockCount() const { return static_cast<int>(m_states.size()); }
  // A hybrid model's state slots, as the legend says them ("state slots 3 / 36 used · 2
  // checkpoints · 1.5 MiB each"); empty for a model without state.
  QString stateSlotsText() const { return m_stateSlotsText; }

  QSize sizeHint() const override { return {420, 260}; }
  QSize minimumSizeHint() const override { return {160, 80}; }

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  // How the blocks are laid out: cols x rows cells of cellPx pixels, or one pixel per block
  // scaled into target when the pool has more blocks than the area has pixels.
  struct Grid {
    int cols = 0;
    int rows = 0;
    int cellPx = 0;  // 0: the image is scaled into target
    QRect target;
  };

  int legendHeight() const;
  void layoutGrid();
  void renderImage();
  void paintSwatch(QPainter& painter, const QRect& swatch, sluice::KvBlockState state) const;
  // Paints the legend when painter is set; returns its height either way.
  int paintLegend(QPainter* painter) const;

  std::vector<sluice::KvBlockState> m_states;
  QString m_emptyText = "no KV pool yet";
  QString m_stateSlotsText;
  std::vector<int64_t> m_ownerRows;
  int m_blockSize = 0;
  std::array<int, 4> m_counts{};
  Grid m_grid;
  QImage m_image;
  bool m_imageDirty = true;
};

}  // namespace sluice::ui
