// Colours shared by the run views (live plots, KV block map, request timeline). Series colours
// are mid-tone so they read on both light and dark window palettes; anything that must blend
// with the background (empty cells, grid lines) is derived from the widget's QPalette instead of
// being fixed.
#pragma once

#include <QColor>
#include <QPalette>
#include <cstdint>

namespace sluice::ui::run_view_palette {

// Returns colour i of a categorical set of mid-tone colours (wraps around).
QColor series(int i);

// Returns a + (b - a) * t per channel, t in [0, 1]; for tints derived from the palette.
QColor blend(const QColor& a, const QColor& b, double t);

// Returns a stable colour for a request's row index: the same row always gets the same colour,
// neighbouring rows get visibly different ones. The hues avoid the one kept for shared blocks.
QRgb ownerColour(int64_t rowIndex);

// Shared KV blocks: two tones drawn as a hatch so they stand apart from any owner colour.
QColor sharedColour();
QColor sharedHatchColour();

// A block that is free but still holds a revivable prefix: a pale tint of the background.
QColor cachedFreeColour(const QPalette& palette);

// Request timeline phases and the outline of the slowest rows.
QColor queuedColour();
QColor prefillColour();
QColor decodeColour();
QColor slowOutlineColour();

// Subtle lines (grid, cell borders) that stay faint on light and dark backgrounds.
QColor gridColour(const QPalette& palette);

}  // namespace sluice::ui::run_view_palette
