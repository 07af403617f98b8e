// Pictures of widgets for a person to look at: with SLUICE_GUI_SHOTS_DIR set, saveShot writes
// <dir>/<name>.png; without it, it only checks that the widget paints.
#pragma once

#include <QDir>
#include <QImage>
#include <QString>
#include <QWidget>
#include <QtGlobal>

namespace sluice::test {

// Returns whether the widget painted (and, with SLUICE_GUI_SHOTS_DIR set, was saved).
inline bool saveShot(QWidget& widget, const QString& name) {
  const QImage image = widget.grab().toImage();
  if (image.isNull()) return false;
  const QString dir = qEnvironmentVariable("SLUICE_GUI_SHOTS_DIR");
  if (dir.isEmpty()) return true;
  QDir().mkpath(dir);
  return image.save(QDir(dir).filePath(name + ".png"));
}

}  // namespace sluice::test
