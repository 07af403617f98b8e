#include "ui/pairs/pair_colors.h"

#include "ui/common/run_view_palette.h"

namespace sluice::ui::pair_colors {

bool isDark(const QPalette& palette) {
  return palette.color(QPalette::Base).lightness() < 128;
}

QColor chosen(const QPalette& palette) {
  return isDark(palette) ? QColor(0x81, 0xc7, 0x84) : QColor(0x2e, 0x7d, 0x32);
}

QColor rejected(const QPalette& palette) {
  return isDark(palette) ? QColor(0xef, 0x9a, 0x9a) : QColor(0xc6, 0x28, 0x28);
}

// Tints of the base: pale on a light one, deep on a dark one, so the text stays readable.
QColor onlyInLeft(const QPalette& palette) {
  const QColor amber(0xff, 0xb3, 0x00);
  return run_view_palette::blend(palette.color(QPalette::Base), amber,
                                 isDark(palette) ? 0.40 : 0.45);
}

QColor onlyInRight(const QPalette& palette) {
  const QColor blue(0x42, 0x8b, 0xf5);
  return run_view_palette::blend(palette.color(QPalette::Base), blue,
                                 isDark(palette) ? 0.45 : 0.30);
}

}  // namespace sluice::ui::pair_colors
