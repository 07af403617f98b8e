// Fits the main window to the screen it opens on: the preferred size where the screen has room,
// else the screen's available area (without taskbars), so a 1280x720 laptop never gets a window
// that runs off its bottom edge; a restored geometry from a bigger screen is brought back inside.
#pragma once

#include <QRect>
#include <QSize>

namespace sluice::ui {

// Returns the largest size no bigger than preferred that fits available.
QSize fittedWindowSize(const QSize& preferred, const QRect& available);

// Returns rect moved (and shrunk, where it must be) to lie inside available.
QRect fittedWindowRect(const QRect& rect, const QRect& available);

}  // namespace sluice::ui
