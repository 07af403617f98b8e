#include "app/jobs_directory.h"

#include <QDir>
#include <QStandardPaths>

namespace sluice {

QString jobsDirectory() {
  const QString base = QStandardPaths::isTestModeEnabled()
                           ? QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)
                           : QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  return QDir(base.isEmpty() ? QDir::homePath() : base).filePath("Sluice Jobs");
}

}  // namespace sluice
