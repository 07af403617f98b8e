#include "ui/window/app_palette.h"

#include <QApplication>
#include <QStyle>
#include <QStyleFactory>

namespace sluice::ui {

QPalette darkPalette() {
  QPalette dark;
  const QColor window(0x2b, 0x2d, 0x30);
  const QColor base(0x1e, 0x1f, 0x22);
  const QColor text(0xe6, 0xe6, 0xe6);
  const QColor disabledText(0x80, 0x80, 0x80);
  dark.setColor(QPalette::Window, window);
  dark.setColor(QPalette::WindowText, text);
  dark.setColor(QPalette::Base, base);
  dark.setColor(QPalette::AlternateBase, window);
  dark.setColor(QPalette::ToolTipBase, base);
  dark.setColor(QPalette::ToolTipText, text);
  dark.setColor(QPalette::PlaceholderText, disabledText);
  dark.setColor(QPalette::Text, text);
  dark.setColor(QPalette::Button, QColor(0x3a, 0x3c, 0x40));
  dark.setColor(QPalette::ButtonText, text);
  dark.setColor(QPalette::BrightText, Qt::white);
  dark.setColor(QPalette::Light, QColor(0x4a, 0x4c, 0x50));
  dark.setColor(QPalette::Midlight, QColor(0x40, 0x42, 0x46));
  dark.setColor(QPalette::Mid, QColor(0x30, 0x32, 0x35));
  dark.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
  dark.setColor(QPalette::Shadow, Qt::black);
  dark.setColor(QPalette::Highlight, QColor(0x3d, 0x7e, 0xd6));
  dark.setColor(QPalette::HighlightedText, Qt::white);
  dark.setColor(QPalette::Link, QColor(0x6c, 0xa8, 0xff));
  for (const auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    dark.setColor(QPalette::Disabled, role, disabledText);
  return dark;
}

bool applyPaletteNamed(const QString& name) {
  if (name == "system") return true;
  if (name != "dark" && name != "light") return false;
  // Fusion draws with the palette it is given (native styles may keep their own colours).
  QApplication::setStyle(QStyleFactory::create("Fusion"));
  QApplication::setPalette(name == "dark" ? darkPalette()
                                          : QApplication::style()->standardPalette());
  return true;
}

}  // namespace sluice::ui
