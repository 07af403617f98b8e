#include "ui/common/wheel_guard.h"

#include <QAbstractScrollArea>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QChildEvent>
#include <QComboBox>
#include <QCoreApplication>
#include <QScrollBar>
#include <QWheelEvent>
#include <QWidget>

namespace sluice::ui {

WheelGuard::WheelGuard(QWidget* root) : QObject(root) {}

WheelGuard* WheelGuard::install(QWidget* root) {
  auto* guard = new WheelGuard(root);
  guard->watch(root);
  return guard;
}

bool WheelGuard::isGuardedField(const QWidget* widget) {
  if (qobject_cast<const QAbstractSpinBox*>(widget) || qobject_cast<const QComboBox*>(widget))
    return true;
  return qobject_cast<const QAbstractSlider*>(widget) && !qobject_cast<const QScrollBar*>(widget);
}

void WheelGuard::watch(QWidget* widget) {
  QList<QWidget*> widgets = widget->findChildren<QWidget*>();
  widgets.prepend(widget);
  for (QWidget* each : widgets) {
    // Installing twice is harmless: Qt keeps one entry per filter object.
    each->installEventFilter(this);
    if (isGuardedField(each) && each->focusPolicy() == Qt::WheelFocus)
      each->setFocusPolicy(Qt::StrongFocus);
  }
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::ChildPolished) {
    // A widget added after install (its parent is watched): polished children arrive complete,
    // so their type is known here, unlike at ChildAdded.
    if (auto* child = qobject_cast<QWidget*>(static_cast<QChildEvent*>(event)->child()))
      watch(child);
    return false;
  }
  if (event->type() != QEvent::Wheel) return false;
  auto* field = qobject_cast<QWidget*>(watched);
  if (field == nullptr || !isGuardedField(field) || field->hasFocus()) return false;
  // Handled here: the field never sees the wheel. Accepted once the page scrolled, so Qt does not
  // also hand it on to the field's parents; left ignored otherwise, so they may take it.
  event->setAccepted(scrollEnclosingArea(field, *static_cast<QWheelEvent*>(event)));
  return true;
}

bool WheelGuard::scrollEnclosingArea(QWidget* field, const QWheelEvent& wheel) {
  for (QWidget* above = field->parentWidget(); above != nullptr; above = above->parentWidget()) {
    auto* area = qobject_cast<QAbstractScrollArea*>(above);
    if (area == nullptr || !area->viewport()->isAncestorOf(field)) continue;
    QWidget* viewport = area->viewport();
    QWheelEvent forwarded(field->mapTo(viewport, wheel.position()), wheel.globalPosition(),
                          wheel.pixelDelta(), wheel.angleDelta(), wheel.buttons(),
                          wheel.modifiers(), wheel.phase(), wheel.inverted(), wheel.source(),
                          wheel.pointingDevice());
    QCoreApplication::sendEvent(viewport, &forwarded);
    return true;
  }
  return false;
}

}  // namespace sluice::ui
