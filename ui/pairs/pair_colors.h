// The Pairs tab's colours, from the palette the view is painted with (light or dark): the verdict
// colours (chosen green, rejected red) and the word marks of the diff, which say "only in this
// sample" on either side and so must not look like a verdict: amber on the left, blue on the
// right, hues far from both the green and the red, as opaque tints of the text views' base.
#pragma once

#include <QColor>
#include <QPalette>

namespace sluice::ui::pair_colors {

// True when the palette's base (the text views' background) is dark.
bool isDark(const QPalette& palette);

// The text colour of a chosen and of a rejected sample's verdict.
QColor chosen(const QPalette& palette);
QColor rejected(const QPalette& palette);

// The background of the words only the left (amber) or only the right (blue) sample has.
QColor onlyInLeft(const QPalette& palette);
QColor onlyInRight(const QPalette& palette);

}  // namespace sluice::ui::pair_colors
