#include "ui/results/export_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>
#include <string>

#include "engine/export/export_dpo.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/job_table.h"
#include "ui/common/number_format.h"

namespace sluice::ui {
namespace {

struct FormatChoice {
  sluice::ExportFormat format;
  const char* label;
  const char* extension;
};

const FormatChoice kFormats[] = {
    {ExportFormat::Jsonl,
     QT_TRANSLATE_NOOP("ExportDialog", "JSONL: one object per row, every field"), "jsonl"},
    {ExportFormat::Csv, QT_TRANSLATE_NOOP("ExportDialog", "CSV: one line per row"), "csv"},
    {ExportFormat::Alpaca,
     QT_TRANSLATE_NOOP("ExportDialog", "Alpaca: instruction, input, output (JSON)"), "json"},
    {ExportFormat::OpenAiChat, QT_TRANSLATE_NOOP("ExportDialog", "OpenAI chat fine-tuning (JSONL)"),
     "jsonl"},
    {ExportFormat::ShareGpt, QT_TRANSLATE_NOOP("ExportDialog", "ShareGPT conversations (JSON)"),
     "json"},
    {ExportFormat::DpoPairs,
     QT_TRANSLATE_NOOP("ExportDialog", "DPO pairs: prompt, chosen, rejected (JSONL)"), "jsonl"},
    {ExportFormat::OpenAiBatch,
     QT_TRANSLATE_NOOP("ExportDialog", "OpenAI Batch output: custom_id, response (JSONL)"),
     "jsonl"},
};

struct RuleChoice {
  sluice::DpoRule rule;
  const char* label;
};

const RuleChoice kRules[] = {
    {DpoRule::Longest, QT_TRANSLATE_NOOP("ExportDialog", "Longest sample is chosen")},
    {DpoRule::Shortest, QT_TRANSLATE_NOOP("ExportDialog", "Shortest sample is chosen")},
    {DpoRule::FirstChosen, QT_TRANSLATE_NOOP("ExportDialog", "First sample is chosen")},
    {DpoRule::LastChosen, QT_TRANSLATE_NOOP("ExportDialog", "Last sample is chosen")},
    {DpoRule::Score, QT_TRANSLATE_NOOP("ExportDialog", "Highest score is chosen")},
};

const char* extension_of(sluice::ExportFormat format) {
  for (const FormatChoice& choice : kFormats) {
    if (choice.format == format) return choice.extension;
  }
  return "jsonl";
}

// Runs in a pool thread: everything it needs is passed by value, nothing of the dialog is touched
// (the dialog may be gone by the time it ends).
ExportDialog::Outcome run_export(const std::string& jobPath, const std::string& outputPath,
                                 sluice::ExportFormat format,
                                 const sluice::ExportOptions& options) {
  ExportDialog::Outcome outcome;
  try {
    const auto job = JobStore::open(jobPath);
    const ExportStats stats = export_job(*job, format, outputPath, options);
    outcome.isSuccess = true;
    outcome.numRecords = stats.records_written;
    outcome.message = ExportDialog::tr("Wrote %1 records from %2 rows to %3.")
                          .arg(formatCount(static_cast<qint64>(stats.records_written)))
                          .arg(formatCount(static_cast<qint64>(stats.rows_written)))
                          .arg(QString::fromStdString(outputPath));
    if (stats.rows_skipped > 0)
      outcome.message += ' ' + QString::fromStdString(describe_left_out(stats)) + '.';
    if (format == ExportFormat::DpoPairs)
      outcome.message += ' ' + QString::fromStdString(describe_dpo_sources(stats, options)) + '.';
  } catch (const std::exception& e) {
    outcome.message = ExportDialog::tr("Export failed: %1").arg(QString::fromStdString(e.what()));
  }
  return outcome;
}

// Runs in a pool thread: reads what the dialog's defaults need.
ExportDialog::JobFacts readJobFacts(const std::string& jobPath) {
  ExportDialog::JobFacts facts;
  try {
    const auto table = JobTable::open(jobPath);
    facts.sourcePath = QString::fromStdString(table->info().source_path);
    const nlohmann::ordered_json& params = table->info().params;
    const auto grammar = params.find("grammar");
    facts.hasJsonSchema = grammar != params.end() && grammar->is_object() &&
                          grammar->contains("kind") && grammar->at("kind") == "json_schema";
    facts.hasGrammar = grammar != params.end() || params.contains("schema_column");
    JobTableQuery invalid;
    invalid.validity = RowValidity::Invalid;
    facts.numInvalid = table->count(invalid);
    JobTableQuery query;
    query.status = RowStatus::Failed;
    facts.numFailed = table->count(query);
    query.status = RowStatus::Skipped;
    facts.numSkipped = table->count(query);
  } catch (const std::exception&) {
    // The export itself will say what is wrong with the file; the defaults do without.
    facts = ExportDialog::JobFacts{};
  }
  return facts;
}

// The folder an export goes to by default: the instruction file's, where the person keeps the
// data (the job file may sit in the app's hidden jobs folder); the job's own folder when the
// instruction file's is gone (a job copied from another machine).
QString defaultOutputFolder(const QString& jobPath, const QString& sourcePath) {
  const QFileInfo source(sourcePath);
  if (!sourcePath.isEmpty() && source.isAbsolute() && source.dir().exists())
    return source.dir().path();
  return QFileInfo(jobPath).dir().path();
}

}  // namespace

ExportDialog::ExportDialog(const QString& jobPath, QWidget* parent)
    : QDialog(parent), m_jobPath(jobPath) {
  setWindowTitle(tr("Export results"));
  QFormLayout* form = buildForm();
  m_busy = new QProgressBar(this);
  m_busy->setRange(0, 0);  // no steps to count: export_job reports only when it ends
  m_busy->setTextVisible(false);
  m_busy->hide();
  m_result = new QLabel(this);
  m_result->setWordWrap(true);
  m_result->setTextFormat(Qt::PlainText);
  m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  m_exportButton = m_buttons->addButton(tr("Export"), QDialogButtonBox::AcceptRole);
  m_exportButton->setDefault(true);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(m_failedRowsNote);
  layout->addWidget(m_busy);
  layout->addWidget(m_result);
  layout->addWidget(m_buttons);
  setMinimumWidth(520);

  connect(m_format, &QComboBox::currentIndexChanged, this, [this] {
    matchExtensionToFormat();
    updateEnabled();
  });
  connect(m_dpoRule, &QComboBox::currentIndexChanged, this, &ExportDialog::updateEnabled);
  connect(m_includeFailed, &QCheckBox::toggled, this, &ExportDialog::updateEnabled);
  connect(m_reviewedOnly, &QCheckBox::toggled, this, &ExportDialog::updateEnabled);
  connect(m_browse, &QPushButton::clicked, this, &ExportDialog::browse);
  // The Export button starts an export and keeps the dialog open to show how it went.
  connect(m_buttons, &QDialogButtonBox::accepted, this, &ExportDialog::startExport);
  connect(m_buttons, &QDialogButtonBox::rejected, this, &ExportDialog::reject);
  connect(&m_watcher, &QFutureWatcher<Outcome>::finished, this,
          [this] { showOutcome(m_watcher.result()); });
  connect(m_output, &QLineEdit::textEdited, this, [this] { m_isOutputChosen = true; });
  connect(m_flattenOutput, &QCheckBox::clicked, this, [this] { m_isFlattenChosen = true; });
  connect(&m_factsWatcher, &QFutureWatcher<JobFacts>::finished, this,
          [this] { applyJobFacts(m_factsWatcher.result()); });
  m_factsWatcher.setFuture(QtConcurrent::run(readJobFacts, m_jobPath.toStdString()));
  updateEnabled();
}

void ExportDialog::applyJobFacts(const JobFacts& facts) {
  m_facts = facts;
  m_hasReadJob = true;
  if (!m_isFlattenChosen) m_flattenOutput->setChecked(facts.hasJsonSchema);
  if (facts.hasGrammar && facts.numInvalid >= 0) {
    m_leaveOutInvalid->setText(
        facts.numInvalid == 1
            ? tr("Leave out invalid rows (1 in this job)")
            : tr("Leave out invalid rows (%1 in this job)").arg(formatCount(facts.numInvalid)));
  }
  if (!m_isOutputChosen && !isRunning()) {
    const QString folder = defaultOutputFolder(m_jobPath, facts.sourcePath);
    const QFileInfo output(outputPath());
    m_output->setText(QDir(folder).filePath(output.fileName()));  // the format's extension kept
  }
  updateEnabled();
  emit jobRead();
}

QFormLayout* ExportDialog::buildForm() {
  m_format = new QComboBox(this);
  for (const FormatChoice& choice : kFormats)
    m_format->addItem(tr(choice.label), static_cast<int>(choice.format));
  m_dpoRule = new QComboBox(this);
  for (const RuleChoice& choice : kRules)
    m_dpoRule->addItem(tr(choice.label), static_cast<int>(choice.rule));
  m_reasoning = new QComboBox(this);
  m_reasoning->setObjectName(QStringLiteral("reasoningExport"));
  m_reasoning->addItem(tr("Separate (a field or column of its own)"),
                       static_cast<int>(ReasoningExport::Separate));
  m_reasoning->addItem(tr("Keep in the output, in <think> tags"),
                       static_cast<int>(ReasoningExport::Keep));
  m_reasoning->addItem(tr("Strip (the answer alone)"), static_cast<int>(ReasoningExport::Strip));
  m_reasoning->setToolTip(tr("A thinking model's reasoning, kept apart from its answer"));
  m_reviewedOnly = new QCheckBox(tr("Reviewed rows only"), this);
  m_reviewedOnly->setObjectName(QStringLiteral("reviewedOnly"));
  m_reviewedOnly->setToolTip(
      tr("Only the rows picked in the Pairs tab; the rows nobody reviewed are left out"));
  m_scoreField = new QLineEdit(QStringLiteral("score"), this);
  m_scoreField->setToolTip(tr("The key in each sample's \"extra\" object that holds its score"));
  m_flattenOutput = new QCheckBox(tr("Schema fields as columns"), this);
  m_flattenOutput->setObjectName(QStringLiteral("flattenOutput"));
  m_flattenOutput->setToolTip(
      tr("CSV: a column per top-level field of each JSON output (output.<field>)"));
  m_includeFailed = new QCheckBox(tr("Include failed and skipped rows, with their error"), this);
  m_leaveOutInvalid = new QCheckBox(tr("Leave out invalid rows"), this);
  m_leaveOutInvalid->setObjectName(QStringLiteral("leaveOutInvalid"));
  m_leaveOutInvalid->setToolTip(
      tr("Rows with an output that does not follow the job's schema or grammar, as judged when "
         "each row finished (rows stored before validity was kept have no verdict and stay)"));
  m_failedRowsNote = new QLabel(this);
  m_failedRowsNote->setWordWrap(true);
  m_failedRowsNote->setTextFormat(Qt::PlainText);
  m_output = new QLineEdit(this);
  // The job's own folder until its instruction file's is known (applyJobFacts).
  const QString folder = QFileInfo(m_jobPath).dir().path();
  m_output->setText(
      QDir(folder).filePath(QFileInfo(m_jobPath).completeBaseName() + QStringLiteral(".jsonl")));
  m_browse = new QPushButton(tr("Browse…"), this);
  auto* outputRow = new QHBoxLayout;
  outputRow->addWidget(m_output, 1);
  outputRow->addWidget(m_browse);

  auto* form = new QFormLayout;
  form->addRow(tr("Format:"), m_format);
  form->addRow(tr("DPO pairs:"), m_dpoRule);
  form->addRow(QString(), m_reviewedOnly);
  form->addRow(tr("Score field:"), m_scoreField);
  form->addRow(tr("Reasoning:"), m_reasoning);
  form->addRow(QString(), m_flattenOutput);
  form->addRow(QString(), m_includeFailed);
  form->addRow(QString(), m_leaveOutInvalid);
  form->addRow(tr("Save to:"), outputRow);
  return form;
}

QString ExportDialog::failedRowsText() const {
  return m_failedRowsNote->text();
}

void ExportDialog::updateFailedRowsNote() {
  const QString counts = m_facts.numFailed < 0 ? QString()
                                               : tr(" This job has %1 failed and %2 skipped rows.")
                                                     .arg(formatCount(m_facts.numFailed),
                                                          formatCount(m_facts.numSkipped));
  const bool honoursIncludeFailed =
      format() == ExportFormat::Jsonl || format() == ExportFormat::Csv;
  QString note;
  if (!honoursIncludeFailed) {
    note = tr("Failed and skipped rows are left out: this format needs an output to train on.");
  } else if (m_includeFailed->isChecked()) {
    note = tr("Failed and skipped rows are included, each with its error.");
  } else {
    note = tr("Failed and skipped rows are left out; tick the box above to include them.");
  }
  note += counts;
  if (format() == ExportFormat::DpoPairs) {
    note += m_reviewedOnly->isChecked()
                ? tr(" Only rows picked in the Pairs tab go in (rows marked unusable or a tie are "
                     "left out).")
                : tr(" Rows picked in the Pairs tab use their picks (rows marked unusable or a "
                     "tie are left out); the rule above picks the others, and a rule that cannot "
                     "tell two samples apart (a tie) chooses the lower sample.");
  }
  m_failedRowsNote->setText(note);
}

ExportDialog::~ExportDialog() {
  m_watcher.waitForFinished();
}

void ExportDialog::setChoices(const QString& outputPath, sluice::ExportFormat format,
                              const sluice::ExportOptions& options) {
  m_format->setCurrentIndex(m_format->findData(static_cast<int>(format)));
  m_dpoRule->setCurrentIndex(m_dpoRule->findData(static_cast<int>(options.dpo_rule)));
  m_reasoning->setCurrentIndex(m_reasoning->findData(static_cast<int>(options.reasoning)));
  m_scoreField->setText(QString::fromStdString(options.score_field));
  m_includeFailed->setChecked(options.include_failed);
  m_leaveOutInvalid->setChecked(options.leave_out_invalid);
  m_reviewedOnly->setChecked(options.reviewed_only);
  m_flattenOutput->setChecked(options.flatten_output);
  m_output->setText(outputPath);
  m_isOutputChosen = m_isFlattenChosen = true;  // the job's facts, read later, keep these
}

QString ExportDialog::outputPath() const {
  return m_output->text().trimmed();
}

sluice::ExportFormat ExportDialog::format() const {
  return static_cast<ExportFormat>(m_format->currentData().toInt());
}

sluice::ExportOptions ExportDialog::options() const {
  ExportOptions options;
  options.dpo_rule = static_cast<DpoRule>(m_dpoRule->currentData().toInt());
  options.score_field = m_scoreField->text().trimmed().toStdString();
  options.reasoning = static_cast<ReasoningExport>(m_reasoning->currentData().toInt());
  options.include_failed = m_includeFailed->isChecked();
  // Harmless for free text, whose rows have no verdict to leave them out by.
  options.leave_out_invalid = m_leaveOutInvalid->isChecked();
  options.flatten_output = format() == ExportFormat::Csv && m_flattenOutput->isChecked();
  options.reviewed_only = format() == ExportFormat::DpoPairs && m_reviewedOnly->isChecked();
  return options;
}

QString ExportDialog::resultText() const {
  return m_result->text();
}

void ExportDialog::startExport() {
  if (isRunning()) return;
  if (outputPath().isEmpty()) {
    showOutcome({false, tr("Choose a file to save to."), 0});
    return;
  }
  if (format() == ExportFormat::DpoPairs && options().dpo_rule == DpoRule::Score &&
      options().score_field.empty()) {
    showOutcome({false, tr("Name the score field that ranks the samples."), 0});
    return;
  }
  m_result->clear();
  m_busy->show();
  m_watcher.setFuture(QtConcurrent::run(run_export, m_jobPath.toStdString(),
                                        outputPath().toStdString(), format(), options()));
  updateEnabled();
}

void ExportDialog::done(int result) {
  if (isRunning()) {
    m_result->setStyleSheet(QString());
    m_result->setText(tr("The export is still running; the dialog closes once it is written."));
    return;
  }
  QDialog::done(result);
}

void ExportDialog::browse() {
  const QString extension = QString::fromLatin1(extension_of(format()));
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export to"), outputPath(),
      tr("%1 files (*.%2);;All files (*)").arg(extension.toUpper(), extension));
  if (path.isEmpty()) return;
  m_output->setText(path);
  m_isOutputChosen = true;
}

void ExportDialog::updateEnabled() {
  const bool isIdle = !isRunning();
  const bool isDpo = format() == ExportFormat::DpoPairs;
  m_format->setEnabled(isIdle);
  m_dpoRule->setEnabled(isIdle && isDpo);
  m_reviewedOnly->setEnabled(isIdle && isDpo);
  m_scoreField->setEnabled(isIdle && isDpo && options().dpo_rule == DpoRule::Score);
  m_flattenOutput->setEnabled(isIdle && format() == ExportFormat::Csv);
  m_includeFailed->setEnabled(isIdle &&
                              (format() == ExportFormat::Jsonl || format() == ExportFormat::Csv));
  m_leaveOutInvalid->setEnabled(isIdle && m_facts.hasGrammar);
  m_output->setEnabled(isIdle);
  m_browse->setEnabled(isIdle);
  m_exportButton->setEnabled(isIdle);
  updateFailedRowsNote();
}

void ExportDialog::matchExtensionToFormat() {
  const QFileInfo output(outputPath());
  const QString suffix = output.suffix().toLower();
  if (suffix != "jsonl" && suffix != "json" && suffix != "csv") return;  // the user's own choice
  const QString renamed = output.completeBaseName() + '.' + extension_of(format());
  m_output->setText(output.dir().filePath(renamed));
}

void ExportDialog::showOutcome(const Outcome& outcome) {
  m_busy->hide();
  m_result->setStyleSheet(outcome.isSuccess ? QStringLiteral("color: #2e7d32;")
                                            : QStringLiteral("color: #c62828;"));
  m_result->setText(outcome.message);
  updateEnabled();
  emit exportFinished(outcome.isSuccess, outcome.message);
}

}  // namespace sluice::ui
