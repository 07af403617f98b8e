// Colours of a QCustomPlot's frame taken from a widget palette, so plots follow the platform's
// light or dark palette: the outer background is the window colour, the data area the base
// colour, axes, ticks and labels the text colour, grid lines a faint mix of the two. Callers
// apply it again on QEvent::PaletteChange (an application palette change arrives as one).
#pragma once

#include <QPalette>

class QCustomPlot;

namespace sluice::ui {

// Styles plot's background, axis rect, axes (x, y, y2), grid and legend text from colours.
void applyPlotPalette(QCustomPlot* plot, const QPalette& colours);

}  // namespace sluice::ui
