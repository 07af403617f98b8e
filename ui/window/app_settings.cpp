#include "ui/window/app_settings.h"

#include <QSettings>

#include "engine/core/json_parse.h"

namespace sluice::ui {

namespace {
constexpr int kMaxRecent = 8;
}  // namespace

QStringList AppSettings::pushRecent(QStringList list, const QString& path) {
  list.removeAll(path);
  list.prepend(path);
  while (list.size() > kMaxRecent) list.removeLast();
  return list;
}

QStringList AppSettings::recentModels() const {
  return QSettings().value("recent/models").toStringList();
}
QStringList AppSettings::recentDatasets() const {
  return QSettings().value("recent/datasets").toStringList();
}
QStringList AppSettings::recentJobs() const {
  return QSettings().value("recent/jobs").toStringList();
}

void AppSettings::addRecentModel(const QString& path) {
  QSettings().setValue("recent/models", pushRecent(recentModels(), path));
}
void AppSettings::addRecentDataset(const QString& path) {
  QSettings().setValue("recent/datasets", pushRecent(recentDatasets(), path));
}
void AppSettings::addRecentJob(const QString& path) {
  QSettings().setValue("recent/jobs", pushRecent(recentJobs(), path));
}

QString AppSettings::lastModel() const {
  return QSettings().value("last/model").toString();
}
QString AppSettings::lastTokenizer() const {
  return QSettings().value("last/tokenizer").toString();
}
QString AppSettings::lastDataset() const {
  return QSettings().value("last/dataset").toString();
}

void AppSettings::setLastModel(const QString& path, const QString& tokenizerPath) {
  QSettings settings;
  settings.setValue("last/model", path);
  settings.setValue("last/tokenizer", tokenizerPath);
}
void AppSettings::setLastDataset(const QString& path) {
  QSettings().setValue("last/dataset", path);
}

std::optional<GenerationSpec> AppSettings::lastSpec() const {
  const QString text = QSettings().value("run/lastSpec").toString();
  if (text.isEmpty()) return std::nullopt;
  try {
    // Depth-checked like every other JSON Sluice reads; a bad value throws and is dropped.
    return spec_from_json(parse_json_text<nlohmann::ordered_json>(text.toStdString(), "settings"));
  } catch (const std::exception&) {
    return std::nullopt;  // written by another version: start from the defaults
  }
}

void AppSettings::setLastSpec(const GenerationSpec& spec) {
  QSettings().setValue("run/lastSpec", QString::fromStdString(spec_to_json(spec).dump()));
}

QByteArray AppSettings::windowGeometry() const {
  return QSettings().value("window/geometry").toByteArray();
}
QByteArray AppSettings::windowState() const {
  return QSettings().value("window/state").toByteArray();
}

void AppSettings::setWindow(const QByteArray& geometry, const QByteArray& state) {
  QSettings settings;
  settings.setValue("window/geometry", geometry);
  settings.setValue("window/state", state);
}

}  // namespace sluice::ui
