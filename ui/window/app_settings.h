// What the app remembers between sessions (QSettings): recent models, instruction files and
// jobs, the last model and instruction file, and the last generation parameters.
#pragma once

#include <QStringList>

#include "app/generation_spec.h"

namespace sluice::ui {

class AppSettings {
 public:
  QStringList recentModels() const;
  QStringList recentDatasets() const;
  QStringList recentJobs() const;
  void addRecentModel(const QString& path);
  void addRecentDataset(const QString& path);
  void addRecentJob(const QString& path);

  // The last model that loaded (with its tokenizer, "" for the model's own) and the last
  // instruction file that read, for a relaunch to open again.
  QString lastModel() const;
  QString lastTokenizer() const;
  QString lastDataset() const;
  void setLastModel(const QString& path, const QString& tokenizerPath);
  void setLastDataset(const QString& path);

  // The last spec the user started, or nullopt when none was saved (or it no longer parses).
  std::optional<GenerationSpec> lastSpec() const;
  void setLastSpec(const GenerationSpec& spec);

  QByteArray windowGeometry() const;
  QByteArray windowState() const;
  void setWindow(const QByteArray& geometry, const QByteArray& state);

 private:
  static QStringList pushRecent(QStringList list, const QString& path);
};

}  // namespace sluice::ui
