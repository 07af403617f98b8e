#include "ui/window/window_fit.h"

#include <algorithm>

namespace sluice::ui {

QSize fittedWindowSize(const QSize& preferred, const QRect& available) {
  if (!available.isValid()) return preferred;
  return preferred.boundedTo(available.size());
}

QRect fittedWindowRect(const QRect& rect, const QRect& available) {
  if (!available.isValid()) return rect;
  QRect out(rect.topLeft(), fittedWindowSize(rect.size(), available));
  out.moveLeft(std::clamp(out.left(), available.left(), available.right() - out.width() + 1));
  out.moveTop(std::clamp(out.top(), available.top(), available.bottom() - out.height() + 1));
  return out;
}

}  // namespace sluice::ui
