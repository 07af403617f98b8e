// A dark palette for `sluice gui --palette dark` (and tests): the window otherwise follows the
// platform's palette, light or dark; this lets a light desktop (or a screenshot run under Xvfb)
// show the dark one. Every view derives its colours from the palette it gets.
#pragma once

#include <QPalette>
#include <QString>

namespace sluice::ui {

// Returns a dark palette (grey window, near-black base, light text, blue highlight).
QPalette darkPalette();
// Applies "dark", "light" (Fusion's default) or "system" (leaves the platform's) to the
// application; returns false for any other name.
bool applyPaletteNamed(const QString& name);

}  // namespace sluice::ui
