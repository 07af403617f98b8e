#include "ui/results/output_validity.h"

#include <QObject>

#include "engine/core/error.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/jobs/job_table.h"

namespace sluice::ui {

namespace {

// What a valid output is valid as; source null: each row's own schema.
QString validAs(const sluice::GrammarSource* source) {
  if (!source) return QObject::tr("valid JSON for the row's schema");
  switch (source->kind) {
    case GrammarSourceKind::JsonSchema:
      return QObject::tr("valid JSON for the schema");
    case GrammarSourceKind::JsonObject:
      return QObject::tr("a valid JSON object");
    case GrammarSourceKind::Regex:
      return QObject::tr("matches the regular expression");
    case GrammarSourceKind::Choice:
      return QObject::tr("one of the choices");
    case GrammarSourceKind::Gbnf:
      return QObject::tr("a sentence of the grammar");
  }
  return {};
}

}  // namespace

std::unique_ptr<OutputValidity> OutputValidity::forSpec(const sluice::GenerationSpec& spec) {
  if (!spec.sampling.grammar && spec.schema_column.empty()) return nullptr;
  std::unique_ptr<OutputValidity> validity(new OutputValidity);
  if (spec.sampling.grammar)
    validity->m_source = spec.sampling.grammar;
  else
    validity->m_rowSchemas =
        std::make_unique<RowSchemas>(spec.schema_column, spec.input_path, spec.json_grammar);
  return validity;
}

std::shared_ptr<const sluice::OutputCheck> OutputValidity::checkFor(const sluice::RowResult& row) {
  m_grammarError = m_rowSchemas ? QString() : m_sourceError;
  if (!m_grammarError.isEmpty()) return nullptr;  // the job's grammar is not compiled again
  try {
    const GrammarSource source = m_rowSchemas ? m_rowSchemas->source_for(row) : *m_source;
    const auto it = m_checks.find(source.text);
    if (it != m_checks.end()) return it->second;
    if (m_checks.size() >= 64) m_checks.clear();
    auto check = std::make_shared<const OutputCheck>(source, m_grammars.get(source));
    m_checks.emplace(source.text, check);
    return check;
  } catch (const Error& e) {
    m_grammarError = QString::fromUtf8(e.what());
    if (!m_rowSchemas) m_sourceError = m_grammarError;
    return nullptr;
  }
}

std::optional<bool> OutputValidity::isValid(const sluice::RowResult& row, size_t sampleIdx) {
  if (sampleIdx >= row.samples.size()) return std::nullopt;
  m_lastReason.clear();
  m_grammarError.clear();
  const sluice::SampleResult& sample = row.samples[sampleIdx];
  if (sample.valid) {  // judged when the row finished (the job file keeps it)
    m_lastReason = sample.invalid_reason;
    return *sample.valid;
  }
  const auto check = checkFor(row);
  if (!check) return false;
  const OutputVerdict verdict = check->check(row.samples[sampleIdx].output);
  m_lastReason = verdict.reason;
  return verdict.is_valid;
}

QString OutputValidity::describe(const sluice::RowResult& row, size_t sampleIdx) {
  const std::optional<bool> valid = isValid(row, sampleIdx);
  if (!valid) return {};
  if (*valid) return validAs(m_source.get());
  if (!m_grammarError.isEmpty()) return QObject::tr("not valid: %1").arg(m_grammarError);
  const std::string& reason = row.samples[sampleIdx].finish_reason;
  if (reason == "length") return QObject::tr("not valid: cut off by max tokens");
  if (reason == "abort") return QObject::tr("not valid: cancelled before it was complete");
  if (reason == "error") return QObject::tr("not valid: the sample ended with an error");
  if (!m_lastReason.empty())
    return QObject::tr("not valid: %1").arg(QString::fromStdString(m_lastReason));
  return QObject::tr("not valid: the output is not complete");
}

PageValidityReader::PageValidityReader(std::string jobPath, sluice::GenerationSpec spec)
    : m_jobPath(std::move(jobPath)), m_spec(std::move(spec)) {}

PageValidityReader::~PageValidityReader() = default;

QStringList PageValidityReader::describe(const sluice::RowResult& row) {
  QStringList texts;
  if (!m_validity) m_validity = OutputValidity::forSpec(m_spec);
  if (!m_validity) return texts;  // free text: nothing to check
  for (size_t i = 0; i < row.samples.size(); ++i) texts << m_validity->describe(row, i);
  return texts;
}

std::vector<std::optional<bool>> PageValidityReader::read(const std::vector<int64_t>& rowIndices,
                                                          std::string& error) {
  std::vector<std::optional<bool>> isValid(rowIndices.size());
  try {
    if (!m_table) m_table = JobTable::open(m_jobPath);
    if (!m_validity) m_validity = OutputValidity::forSpec(m_spec);
    if (!m_validity) return isValid;  // free text: nothing to check
    for (size_t i = 0; i < rowIndices.size(); ++i) {
      const std::optional<RowResult> row = m_table->row(rowIndices[i]);
      if (!row) continue;
      for (size_t sampleIdx = 0; sampleIdx < row->samples.size(); ++sampleIdx) {
        isValid[i] = m_validity->isValid(*row, sampleIdx);
        if (isValid[i] == false) break;  // one invalid sample makes the row invalid
      }
    }
  } catch (const Error& e) {
    m_table.reset();  // opened again for the next page
    error = e.what();
    return std::vector<std::optional<bool>>(rowIndices.size());
  }
  return isValid;
}

}  // namespace sluice::ui
