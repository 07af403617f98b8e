#include "ui/setup/changed_settings.h"

#include <QString>

namespace sluice::ui {

namespace {

// "0.9", "1.15", "128": the shortest text that reads back as the value.
QString settingNumber(double value) {
  return QString::number(value, 'g', 6);
}

QString grammarName(const sluice::GrammarSource& grammar) {
  switch (grammar.kind) {
    case GrammarSourceKind::JsonSchema:
      return QStringLiteral("JSON Schema");
    case GrammarSourceKind::JsonObject:
      return QStringLiteral("any JSON object");
    case GrammarSourceKind::Regex:
      return QStringLiteral("regular expression");
    case GrammarSourceKind::Choice:
      return QStringLiteral("choice");
    case GrammarSourceKind::Gbnf:
      return QStringLiteral("GBNF grammar");
  }
  return QStringLiteral("grammar");
}

void describeSampling(const SamplingParams& s, QStringList& out) {
  const SamplingParams d;
  if (s.n != d.n) out << QStringLiteral("n = %1").arg(s.n);
  if (s.temperature != d.temperature)
    out << QStringLiteral("temperature %1").arg(settingNumber(s.temperature));
  if (s.max_tokens != d.max_tokens) out << QStringLiteral("max tokens %1").arg(s.max_tokens);
  if (s.top_p != d.top_p) out << QStringLiteral("top-p %1").arg(settingNumber(s.top_p));
  if (s.top_k != d.top_k && s.top_k > 0) out << QStringLiteral("top-k %1").arg(s.top_k);
  if (s.min_p != d.min_p) out << QStringLiteral("min-p %1").arg(settingNumber(s.min_p));
  if (s.repetition_penalty != d.repetition_penalty)
    out << QStringLiteral("repetition penalty %1").arg(settingNumber(s.repetition_penalty));
  if (s.presence_penalty != d.presence_penalty)
    out << QStringLiteral("presence penalty %1").arg(settingNumber(s.presence_penalty));
  if (s.frequency_penalty != d.frequency_penalty)
    out << QStringLiteral("frequency penalty %1").arg(settingNumber(s.frequency_penalty));
  if (s.seed != d.seed) out << QStringLiteral("seed %1").arg(static_cast<quint64>(s.seed));
  if (s.stop.size() == 1) out << QStringLiteral("a stop string");
  if (s.stop.size() > 1) out << QStringLiteral("%1 stop strings").arg(s.stop.size());
}

void describeEngine(const GenerationSpec& spec, QStringList& out) {
  const GenerationSpec d;
  if (spec.device != d.device && !spec.remote.is_remote())
    out << QStringLiteral("device %1").arg(QString::fromStdString(spec.device));
  const EngineConfig& e = spec.engine;
  if (e.gpu_memory_utilization != d.engine.gpu_memory_utilization)
    out << QStringLiteral("GPU memory %1 %").arg(settingNumber(e.gpu_memory_utilization * 100.0));
  if (e.kv_cache_dtype != d.engine.kv_cache_dtype) out << QStringLiteral("FP8 KV cache");
  if (e.max_num_seqs != d.engine.max_num_seqs)
    out << QStringLiteral("max running %1").arg(e.max_num_seqs);
  if (e.num_kv_blocks != d.engine.num_kv_blocks)
    out << QStringLiteral("%1 KV blocks").arg(e.num_kv_blocks);
  else if (e.kv_cache_bytes != d.engine.kv_cache_bytes)
    out << QStringLiteral("KV budget %1 MiB").arg((e.kv_cache_bytes + (1 << 20) - 1) >> 20);
  if (spec.num_threads != d.num_threads)
    out << QStringLiteral("%1 CPU threads").arg(spec.num_threads);
}

}  // namespace

QStringList describeChangedSettings(const sluice::GenerationSpec& spec) {
  QStringList out;
  describeSampling(spec.sampling, out);
  if (spec.sampling.grammar) out << grammarName(*spec.sampling.grammar);
  if (!spec.schema_column.empty())
    out << QStringLiteral("schema per row (column %1)")
               .arg(QString::fromStdString(spec.schema_column));
  describeEngine(spec, out);
  if (spec.remote.is_remote()) {
    QStringList urls;
    for (const std::string& url : spec.remote.endpoints) urls << QString::fromStdString(url);
    QString remote = QStringLiteral("remote servers %1").arg(urls.join(QStringLiteral(", ")));
    if (!spec.remote.model.empty())
      remote += QStringLiteral(" (model %1)").arg(QString::fromStdString(spec.remote.model));
    out << remote;
  }
  return out;
}

}  // namespace sluice::ui
