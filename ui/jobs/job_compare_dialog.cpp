#include "ui/jobs/job_compare_dialog.h"

#include <QCheckBox>
#include <QDir>
#include <QFileInfo>
#include <QGridLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPromise>
#include <QScreen>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "engine/core/error.h"
#include "engine/jobs/job_table.h"
#include "ui/common/number_format.h"
#include "ui/jobs/job_compare_model.h"
#include "ui/jobs/job_naming.h"
#include "ui/jobs/job_settings.h"
#include "ui/window/window_fit.h"

namespace sluice::ui {

namespace {

// Compares the two jobs on the thread pool; stops early when the dialog goes away.
void compareOnPool(QPromise<JobCompareDialog::Outcome>& promise, const QString& pathA,
                   const QString& pathB) {
  JobCompareDialog::Outcome outcome;
  try {
    const auto a = JobTable::open(pathA.toStdString());
    const auto b = JobTable::open(pathB.toStdString());
    outcome.infoA = a->info();
    outcome.infoB = b->info();
    outcome.result = compare_jobs(*a, *b, [&promise](int64_t read, int64_t total) {
      promise.setProgressRange(0, static_cast<int>(std::min<int64_t>(total, INT32_MAX)));
      promise.setProgressValue(static_cast<int>(std::min<int64_t>(read, INT32_MAX)));
      return !promise.isCanceled();
    });
  } catch (const Cancelled&) {
    return;
  } catch (const Error& e) {
    outcome.error = QString::fromUtf8(e.what());
  }
  promise.addResult(std::move(outcome));
}

// Reads one row of both jobs in full, on the thread pool.
JobCompareDialog::RowDetail readRowDetail(const QString& pathA, const QString& pathB,
                                          int64_t rowIndex) {
  JobCompareDialog::RowDetail detail;
  detail.rowIndex = rowIndex;
  try {
    detail.a = JobTable::open(pathA.toStdString())->row(rowIndex);
    detail.b = JobTable::open(pathB.toStdString())->row(rowIndex);
  } catch (const Error& e) {
    detail.error = QString::fromUtf8(e.what());
  }
  return detail;
}

QString sideHeading(const char* side, const std::optional<RowResult>& row) {
  if (!row) return QString("%1: not run").arg(side);
  if (row->samples.empty()) return QString("%1: %2").arg(side, to_string(row->status));
  const SampleResult& sample = row->samples.front();
  return QString("%1: %2 · %3 · %L4 tokens")
      .arg(side, to_string(row->status), QString::fromStdString(sample.finish_reason))
      .arg(sample.output_tokens);
}

QString sideText(const std::optional<RowResult>& row) {
  if (!row) return {};
  if (row->samples.empty()) return QString::fromStdString(row->error);
  QStringList samples;
  for (const SampleResult& sample : row->samples) samples << QString::fromStdString(sample.output);
  return samples.join("\n\n───── next sample ─────\n\n");
}

QString lengthText(double value, bool isChars) {
  return QString("%1 %2").arg(formatDecimal(value, 1), isChars ? "chars" : "tokens");
}

QString valueText(const nlohmann::ordered_json& value) {
  if (value.is_number_float()) return QString::number(value.get<double>(), 'g', 6);
  return QString::fromStdString(value.dump());
}

// Appends "key A / B" for every setting a and b hold differently, nested objects by their
// dotted keys ("sampling.temperature 0 / 0.8") down to kMaxSettingsDepth levels.
constexpr int kMaxSettingsDepth = 4;

void appendDifferences(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b,
                       const QString& prefix, QStringList& out, int depth = 0) {
  for (const auto& [key, value] : a.items()) {
    const QString name = prefix + QString::fromStdString(key);
    const auto other = b.find(key);
    if (other == b.end()) {
      out << QString("%1 %2 / —").arg(name, valueText(value));
    } else if (value.is_object() && other->is_object() && depth + 1 < kMaxSettingsDepth) {
      appendDifferences(value, *other, name + '.', out, depth + 1);
    } else if (*other != value) {
      out << QString("%1 %2 / %3").arg(name, valueText(value), valueText(*other));
    }
  }
  for (const auto& [key, value] : b.items()) {
    if (!a.contains(key))
      out << QString("%1 — / %2").arg(prefix + QString::fromStdString(key), valueText(value));
  }
}

}  // namespace

JobCompareDialog::JobCompareDialog(const QString& pathA, const QString& pathB, QWidget* parent)
    : QDialog(parent), m_pathA(pathA), m_pathB(pathB) {
  setWindowTitle(tr("Compare jobs"));
  m_jobs = new QLabel(this);
  m_jobs->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_jobs->setWordWrap(true);
  m_progress = new QProgressBar(this);
  m_progress->setFormat(tr("Reading both jobs… %p%"));
  m_stats = new QTableWidget(this);
  m_stats->setColumnCount(2);
  m_stats->setHorizontalHeaderLabels({tr("A"), tr("B")});
  m_stats->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_stats->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_stats->horizontalHeader()->setMinimumSectionSize(110);
  m_stats->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
  m_stats->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  m_stats->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  m_stats->verticalHeader()->setDefaultSectionSize(m_stats->fontMetrics().height() + 8);
  m_stats->hide();
  m_summary = new QLabel(this);
  m_summary->setWordWrap(true);
  m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_onlyDiffering = new QCheckBox(tr("Only rows that differ"), this);
  m_onlyDiffering->setEnabled(false);
  m_model = new JobCompareModel(this);
  m_rows = new QTableView(this);
  m_rows->setModel(m_model);
  m_rows->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_rows->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_rows->setWordWrap(false);
  m_rows->verticalHeader()->hide();
  m_rows->setSelectionMode(QAbstractItemView::SingleSelection);
  QHeaderView* header = m_rows->horizontalHeader();
  header->setSectionResizeMode(QHeaderView::Interactive);
  for (const int column : {JobCompareModel::PromptColumn, JobCompareModel::OutputAColumn,
                           JobCompareModel::OutputBColumn})
    header->setSectionResizeMode(column, QHeaderView::Stretch);
  header->setSectionResizeMode(JobCompareModel::RowColumn, QHeaderView::ResizeToContents);

  auto* detail = new QWidget(this);
  auto* detailLayout = new QGridLayout(detail);
  detailLayout->setContentsMargins(0, 0, 0, 0);
  for (int side = 0; side < 2; ++side) {
    m_detailHeadings[side] = new QLabel(detail);
    m_detailTexts[side] = new QPlainTextEdit(detail);
    m_detailTexts[side]->setReadOnly(true);
    detailLayout->addWidget(m_detailHeadings[side], 0, side);
    detailLayout->addWidget(m_detailTexts[side], 1, side);
  }
  m_detailHeadings[0]->setText(tr("Select a row to read both outputs in full."));
  m_splitter = new QSplitter(Qt::Vertical, this);
  m_splitter->addWidget(m_rows);
  m_splitter->addWidget(detail);
  m_splitter->setStretchFactor(0, 3);
  m_splitter->setStretchFactor(1, 2);
  m_error = new QLabel(this);
  m_error->setWordWrap(true);
  m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_error->setStyleSheet("color: white; background: #b3261e; padding: 8px;");
  m_error->hide();

  auto* statsColumn = new QVBoxLayout;
  statsColumn->addWidget(m_summary);
  statsColumn->addWidget(m_onlyDiffering);
  statsColumn->addStretch(1);
  auto* top = new QHBoxLayout;
  top->addWidget(m_stats);
  top->addLayout(statsColumn, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_jobs);
  layout->addWidget(m_progress);
  layout->addLayout(top);
  layout->addWidget(m_error);
  layout->addWidget(m_splitter, 1);
  const QScreen* screen = parent != nullptr ? parent->screen() : QGuiApplication::primaryScreen();
  resize(screen != nullptr ? fittedWindowSize(QSize(1400, 900), screen->availableGeometry())
                           : QSize(1100, 700));

  m_jobs->setText(
      tr("A: %1\nB: %2").arg(QDir::toNativeSeparators(pathA), QDir::toNativeSeparators(pathB)));
  connect(&m_watcher, &QFutureWatcher<Outcome>::progressRangeChanged, m_progress,
          &QProgressBar::setRange);
  connect(&m_watcher, &QFutureWatcher<Outcome>::progressValueChanged, m_progress,
          &QProgressBar::setValue);
  connect(&m_watcher, &QFutureWatcher<Outcome>::finished, this, &JobCompareDialog::onCompared);
  connect(m_onlyDiffering, &QCheckBox::toggled, this, &JobCompareDialog::showRows);
  connect(m_rows->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { showDetail(m_model->rowIndexAt(current.row())); });
  connect(&m_detailWatcher, &QFutureWatcher<RowDetail>::finished, this,
          &JobCompareDialog::onDetailRead);
  m_watcher.setFuture(QtConcurrent::run(compareOnPool, pathA, pathB));
}

JobCompareDialog::~JobCompareDialog() {
  m_watcher.cancel();
  m_watcher.waitForFinished();
  m_detailWatcher.waitForFinished();
}

void JobCompareDialog::showDetail(int64_t rowIndex) {
  m_detailRowIndex = rowIndex;
  if (rowIndex < 0 || m_detailWatcher.isRunning()) return;  // onDetailRead reads the newest next
  m_detailWatcher.setFuture(QtConcurrent::run(readRowDetail, m_pathA, m_pathB, rowIndex));
}

void JobCompareDialog::onDetailRead() {
  const RowDetail detail = m_detailWatcher.result();
  if (detail.rowIndex != m_detailRowIndex) {  // another row was selected while this one was read
    showDetail(m_detailRowIndex);
    return;
  }
  if (!detail.error.isEmpty()) {
    m_detailHeadings[0]->setText(detail.error);
    return;
  }
  m_detailHeadings[0]->setText(tr("Row %1 · ").arg(detail.rowIndex) + sideHeading("A", detail.a));
  m_detailHeadings[1]->setText(sideHeading("B", detail.b));
  m_detailTexts[0]->setPlainText(sideText(detail.a));
  m_detailTexts[1]->setPlainText(sideText(detail.b));
  emit detailShown(detail.rowIndex);
}

void JobCompareDialog::onCompared() {
  m_progress->hide();
  if (m_watcher.future().resultCount() == 0) return;  // cancelled
  m_outcome = m_watcher.result();
  if (!m_outcome.error.isEmpty()) {
    m_error->setText(m_outcome.error);
    m_error->show();
    m_splitter->hide();
    m_onlyDiffering->hide();
    qobject_cast<QVBoxLayout*>(layout())->addStretch(1);
    emit compared();
    return;
  }
  describeJobs();
  fillStats(m_outcome.result.stats);
  m_onlyDiffering->setEnabled(true);
  showRows();
  emit compared();
}

void JobCompareDialog::describeJobs() {
  const JobInfo& a = m_outcome.infoA;
  const JobInfo& b = m_outcome.infoB;
  const auto line = [](const char* side, const QString& path, const JobInfo& info) {
    // A remote job's model path is "<model> at <server URL>": its name, not the URL's end.
    const JobSettings settings = jobSettingsOf(info);
    return QString("%1: %2 · model %3")
        .arg(side, QFileInfo(path).fileName(),
             settings.isRemote ? settings.modelName
                               : modelNameOf(QString::fromStdString(info.model_path)));
  };
  QStringList lines = {
      line("A", m_pathA, a), line("B", m_pathB, b),
      tr("Instructions: %1").arg(QDir::toNativeSeparators(QString::fromStdString(a.source_path)))};
  QStringList differences;
  if (a.model_path != b.model_path) differences << tr("model");
  appendDifferences(a.params, b.params, QString(), differences);
  lines << (differences.isEmpty()
                ? tr("Same settings.")
                : tr("Settings that differ (A / B): %1").arg(differences.join(", ")));
  m_jobs->setText(lines.join('\n'));
}

void JobCompareDialog::fillStats(const JobComparisonStats& stats) {
  QList<std::pair<QString, std::pair<QString, QString>>> rows;
  const auto count = [&rows](const QString& label, int64_t a, int64_t b) {
    rows.append({label, {formatCount(a), formatCount(b)}});
  };
  count(tr("Rows"), stats.a.num_rows, stats.b.num_rows);
  count(tr("Done"), stats.a.num_done, stats.b.num_done);
  count(tr("Failed"), stats.a.num_failed, stats.b.num_failed);
  if (stats.a.num_skipped + stats.b.num_skipped > 0)
    count(tr("Skipped"), stats.a.num_skipped, stats.b.num_skipped);
  rows.append({tr("Output length, mean"),
               {lengthText(stats.a.mean_output_length, stats.a.is_length_in_chars),
                lengthText(stats.b.mean_output_length, stats.b.is_length_in_chars)}});
  rows.append({tr("Output length, median"),
               {lengthText(stats.a.median_output_length, stats.a.is_length_in_chars),
                lengthText(stats.b.median_output_length, stats.b.is_length_in_chars)}});
  for (const FinishReasonCounts& counts : finish_reason_table(stats))
    count(tr("Finish: %1").arg(QString::fromStdString(counts.finish_reason)), counts.num_a,
          counts.num_b);
  m_stats->setRowCount(static_cast<int>(rows.size()));
  QStringList labels;
  for (int i = 0; i < rows.size(); ++i) {
    labels << rows[i].first;
    m_stats->setItem(i, 0, new QTableWidgetItem(rows[i].second.first));
    m_stats->setItem(i, 1, new QTableWidgetItem(rows[i].second.second));
  }
  m_stats->setVerticalHeaderLabels(labels);
  m_stats->show();
  QString summary =
      tr("%1 rows in both jobs, %2 differ")
          .arg(formatCount(stats.num_matched_rows), formatCount(stats.num_differing_rows));
  if (stats.num_only_in_a + stats.num_only_in_b > 0)
    summary += tr("; %1 only in A, %2 only in B")
                   .arg(formatCount(stats.num_only_in_a), formatCount(stats.num_only_in_b));
  m_summary->setText(summary + ".");
}

void JobCompareDialog::showRows() {
  const JobComparisonResult& result = m_outcome.result;
  m_model->setRows(m_pathA, m_pathB,
                   m_onlyDiffering->isChecked() ? result.differing_row_indices : result.row_indices,
                   result.differing_row_indices);
}

}  // namespace sluice::ui
