#include "ui/jobs/job_naming.h"

#include <QDir>
#include <QFileInfo>

#include "engine/jobs/job_listing.h"

namespace sluice::ui {

namespace {

constexpr int kMaxNamePartChars = 48;

bool isSafe(QChar c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
}

}  // namespace

QString safeFileNamePart(const QString& text, int maxChars, const QString& fallback) {
  QString out;
  for (const QChar c : text) {
    if (isSafe(c)) {
      out += c;
    } else if (!out.endsWith('-')) {
      out += '-';
    }
  }
  auto trim = [&out] {
    while (!out.isEmpty() && (out.front() == '-' || out.front() == '.')) out.remove(0, 1);
    while (!out.isEmpty() && (out.back() == '-' || out.back() == '.')) out.chop(1);
  };
  trim();
  out.truncate(maxChars);
  trim();
  return out.isEmpty() ? fallback : out;
}

QString modelNameOf(const QString& modelPath) {
  const QFileInfo info(QDir::cleanPath(modelPath));
  return info.isDir() ? info.fileName() : info.completeBaseName();
}

QString newJobPath(const QString& directory, const QString& datasetPath, const QString& modelPath,
                   const QDateTime& when) {
  const QString stem =
      QString("%1__%2__%3")
          .arg(safeFileNamePart(QFileInfo(datasetPath).completeBaseName(), kMaxNamePartChars,
                                "instructions"),
               safeFileNamePart(modelNameOf(modelPath), kMaxNamePartChars, "model"),
               when.toString("yyyy-MM-dd_HHmm"));
  const QDir dir(directory);
  const QString extension = QString::fromUtf8(kJobFileExtension);
  QString path = dir.filePath(stem + extension);
  for (int n = 2; QFileInfo::exists(path); ++n)
    path = dir.filePath(QString("%1-%2%3").arg(stem).arg(n).arg(extension));
  return path;
}

}  // namespace sluice::ui
