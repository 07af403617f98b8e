#include "ui/jobs/job_settings.h"

#include <QCoreApplication>
#include <QStringList>
#include <exception>

#include "app/generation_spec.h"

namespace sluice::ui {
namespace {

QString trSettings(const char* text) {
  return QCoreApplication::translate("sluice::ui::JobSettings", text);
}

QString outputModeOf(const sluice::GenerationSpec& spec, const sluice::JobInfo& info) {
  if (!spec.schema_column.empty()) return trSettings("schema per row");
  if (spec.sampling.grammar) {
    switch (spec.sampling.grammar->kind) {
      case GrammarSourceKind::JsonSchema:
        return trSettings("JSON schema");
      case GrammarSourceKind::JsonObject:
        return trSettings("JSON");
      case GrammarSourceKind::Regex:
        return trSettings("regex");
      case GrammarSourceKind::Choice:
        return trSettings("choice");
      case GrammarSourceKind::Gbnf:
        return trSettings("grammar");
    }
  }
  const bool isBatch = spec.format == DatasetFormat::OpenAiBatch ||
                       info.source_format == to_string(DatasetFormat::OpenAiBatch);
  return isBatch ? trSettings("per line") : trSettings("free text");
}

// The model a remote job's servers served: GenerationJob stores "<model> at <first endpoint>" as
// the job's model path (the name the servers gave, even when the job asked for "their only
// model"); the spec's own name is the fallback for a file written otherwise.
QString remoteModelName(const sluice::GenerationSpec& spec, const sluice::JobInfo& info) {
  const std::string suffix = " at " + spec.remote.endpoints.front();
  const std::string& path = info.model_path;
  if (path.size() > suffix.size() && path.ends_with(suffix))
    return QString::fromStdString(path.substr(0, path.size() - suffix.size()));
  if (!spec.remote.model.empty()) return QString::fromStdString(spec.remote.model);
  return QString::fromStdString(path);
}

}  // namespace

JobSettings jobSettingsOf(const sluice::JobInfo& info) {
  JobSettings settings;
  sluice::GenerationSpec spec;
  try {
    spec = sluice::spec_from_json(info.params);
  } catch (const std::exception&) {
    return settings;  // written by hand or by an older version: nothing to tell
  }
  settings.isKnown = true;
  settings.numSamples = spec.sampling.n;
  settings.temperature = spec.sampling.temperature;
  settings.maxTokens = spec.sampling.max_tokens;
  settings.outputMode = outputModeOf(spec, info);
  settings.isRemote = spec.remote.is_remote();
  if (settings.isRemote) {
    settings.modelName = remoteModelName(spec, info);
    QStringList endpoints;
    for (const std::string& endpoint : spec.remote.endpoints)
      endpoints << QString::fromStdString(endpoint);
    settings.endpoints = endpoints.join(QStringLiteral(", "));
  }
  return settings;
}

}  // namespace sluice::ui
