#include "ui/window/status_label.h"

#include <QPainter>
#include <QStyle>
#include <algorithm>

namespace sluice::ui {

StatusLabel::StatusLabel(QWidget* parent) : QLabel(parent) {
  setTextFormat(Qt::PlainText);
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
}

QSize StatusLabel::sizeHint() const {
  const QMargins margins = contentsMargins();
  return {fontMetrics().horizontalAdvance(text()) + margins.left() + margins.right() + 2,
          QLabel::sizeHint().height()};
}

QSize StatusLabel::minimumSizeHint() const {
  const QMargins margins = contentsMargins();
  const int few = fontMetrics().horizontalAdvance(QStringLiteral("Mm…"));
  return {std::min(sizeHint().width(), few + margins.left() + margins.right()),
          QLabel::minimumSizeHint().height()};
}

QString StatusLabel::shownText() const {
  return fontMetrics().elidedText(text(), Qt::ElideRight, contentsRect().width());
}

void StatusLabel::paintEvent(QPaintEvent* /*event*/) {
  QPainter painter(this);
  const QString shown = shownText();
  const QString tip = shown == text() ? QString() : text();
  if (toolTip() != tip) setToolTip(tip);
  style()->drawItemText(&painter, contentsRect(), Qt::AlignLeft | Qt::AlignVCenter, palette(),
                        isEnabled(), shown, foregroundRole());
}

}  // namespace sluice::ui
