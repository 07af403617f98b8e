// Scrolling never changes a setting: over a spin box, combo box or slider that does not have the
// keyboard focus, the mouse wheel scrolls the page the field sits in (its nearest scroll area)
// instead of changing the value, as Qt Creator's and KDE's settings dialogs do. Once the field
// has the focus (a click, Tab), the wheel changes its value as usual. The fields also stop taking
// the focus from the wheel (Qt::StrongFocus instead of Qt::WheelFocus), so a wheel passing over a
// page never arms one of them.
#pragma once

#include <QObject>

class QWheelEvent;
class QWidget;

namespace sluice::ui {

class WheelGuard final : public QObject {
  Q_OBJECT

 public:
  // Guards every field inside root, those there now and those added later; the guard is a child
  // of root. Returns it.
  static WheelGuard* install(QWidget* root);
  // True for the widgets a guard protects: spin boxes, combo boxes and sliders (not scroll bars).
  static bool isGuardedField(const QWidget* widget);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  explicit WheelGuard(QWidget* root);
  // Watches widget and everything inside it: fields for the wheel, containers for new children.
  void watch(QWidget* widget);
  // Gives the wheel to the scroll area the field sits in; false when there is none.
  static bool scrollEnclosingArea(QWidget* field, const QWheelEvent& wheel);
};

}  // namespace sluice::ui
