#include "ui/results_panel.h"

#include <QComboBox>
#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/results_model.h"
#include "ui/row_detail_pane.h"

namespace sluice::ui {
namespace {

// The status filter's entries carry this for "all statuses".
constexpr int kAllStatuses = -1;

}  // namespace

ResultsPanel::ResultsPanel(QWidget* parent) : QWidget(parent) {
  m_model = new ResultsModel(this);
  QHBoxLayout* filters = buildFilters();
  buildTable();
  m_detail = new RowDetailPane(this);
  // The table gets the width (its columns need it); the detail pane sits below it.
  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(m_view);
  splitter->addWidget(m_detail);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(filters);
  layout->addWidget(m_error);
  layout->addWidget(splitter, 1);

  m_deferredRefresh.setSingleShot(true);
  connect(&m_deferredRefresh, &QTimer::timeout, this, &ResultsPanel::refresh);
  m_searchDelay.setSingleShot(true);
  m_searchDelay.setInterval(kSearchDelayMs);
  connect(&m_searchDelay, &QTimer::timeout, this, &ResultsPanel::applySearch);
  connect(m_search, &QLineEdit::textChanged, this, [this] { m_searchDelay.start(); });
  connect(m_search, &QLineEdit::returnPressed, this, &ResultsPanel::applySearch);
  connect(m_statusFilter, &QComboBox::currentIndexChanged, this, &ResultsPanel::applyStatusFilter);
  connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &ResultsPanel::showCurrentRow);
  connect(m_model, &ResultsModel::modelReset, this, &ResultsPanel::reselectShownRow);
  connect(m_model, &ResultsModel::rowsInserted, this, &ResultsPanel::updateSummary);
  connect(m_model, &ResultsModel::errorOccurred, this, &ResultsPanel::showError);
  connect(m_detail, &RowDetailPane::rowAloneRequested, this, &ResultsPanel::rowAloneRequested);
  updateSummary();
}

QHBoxLayout* ResultsPanel::buildFilters() {
  m_statusFilter = new QComboBox(this);
  m_statusFilter->addItem(tr("All rows"), kAllStatuses);
  m_statusFilter->addItem(tr("Done"), static_cast<int>(RowStatus::Done));
  m_statusFilter->addItem(tr("Failed"), static_cast<int>(RowStatus::Failed));
  m_statusFilter->addItem(tr("Skipped"), static_cast<int>(RowStatus::Skipped));
  m_search = new QLineEdit(this);
  m_search->setPlaceholderText(tr("Search prompts, outputs and errors"));
  m_search->setClearButtonEnabled(true);
  m_summary = new QLabel(this);
  m_summary->setTextFormat(Qt::PlainText);
  m_error = new QLabel(this);
  m_error->setTextFormat(Qt::PlainText);
  m_error->setWordWrap(true);
  m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_error->setStyleSheet(QStringLiteral("color: #c62828;"));
  m_error->hide();
  auto* filters = new QHBoxLayout;
  filters->addWidget(m_statusFilter);
  filters->addWidget(m_search, 1);
  filters->addWidget(m_summary);
  return filters;
}

void ResultsPanel::buildTable() {
  m_view = new QTableView(this);
  m_view->setModel(m_model);
  m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_view->setSelectionMode(QAbstractItemView::SingleSelection);
  m_view->setWordWrap(false);
  m_view->setAlternatingRowColors(true);
  // Row numbers are in the ID column; fixed row heights keep 100k rows cheap to lay out.
  m_view->verticalHeader()->hide();
  m_view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 8);
  m_view->horizontalHeader()->setSortIndicator(ResultsModel::IdColumn, Qt::AscendingOrder);
  m_view->setSortingEnabled(true);  // sorts by the indicator: the model's own order, no work
  const int widths[ResultsModel::NumColumns] = {90, 70, 260, 360, 90, 80, 60};
  for (int column = 0; column < ResultsModel::NumColumns; ++column)
    m_view->setColumnWidth(column, widths[column]);
}

void ResultsPanel::setJobPath(const QString& jobPath) {
  // The window sets the path again when a run of the shown job starts: keep row and selection.
  if (!jobPath.isEmpty() && jobPath == m_model->jobPath()) {
    refresh();
    return;
  }
  clearError();
  m_shownRow.reset();
  m_detail->clear();
  m_model->setJobPath(jobPath);
  updateSummary();
  emit jobPathChanged(jobPath);
}

QString ResultsPanel::jobPath() const {
  return m_model->jobPath();
}

QString ResultsPanel::summaryText() const {
  return m_summary->text();
}

QString ResultsPanel::errorText() const {
  return m_error->text();
}

void ResultsPanel::refresh() {
  // A refresh after a commit reads the view again: tens of ms for a searched or sorted view of a
  // big job. The window asks up to 4 times a second while a job runs, so costly refreshes are
  // spaced to keep them under a fifth of the GUI thread's time. The deferred one always comes,
  // so the last rows of a job do show.
  const qint64 minGapMs = kRefreshCostFactor * m_lastRefreshMs;
  const qint64 sinceLastMs = m_sinceRefresh.isValid() ? m_sinceRefresh.elapsed() : minGapMs;
  if (sinceLastMs < minGapMs) {
    if (!m_deferredRefresh.isActive())
      m_deferredRefresh.start(static_cast<int>(minGapMs - sinceLastMs));
    return;
  }
  m_deferredRefresh.stop();
  QElapsedTimer timer;
  timer.start();
  const bool hasChanged = m_model->refresh();
  m_lastRefreshMs = timer.elapsed();
  m_sinceRefresh.start();
  if (!hasChanged) return;
  // The shown row may have been replaced (a failed row retried); the pane updates only if so.
  if (m_shownRow) showInDetail(m_model->rowResult(m_shownRow->row_index));
  updateSummary();
}

void ResultsPanel::showRowAloneResult(qint64 rowIndex, bool identical, const QString& details) {
  m_detail->showRowAloneResult(rowIndex, identical, details);
}

void ResultsPanel::applyStatusFilter() {
  clearError();
  const int value = m_statusFilter->currentData().toInt();
  m_model->setStatusFilter(value == kAllStatuses
                               ? std::nullopt
                               : std::optional<RowStatus>(static_cast<RowStatus>(value)));
  updateSummary();
}

void ResultsPanel::applySearch() {
  m_searchDelay.stop();
  clearError();
  m_model->setSearchText(m_search->text());
  updateSummary();
}

void ResultsPanel::showCurrentRow() {
  const qint64 rowIndex = m_model->rowIndexAt(m_view->currentIndex().row());
  if (rowIndex < 0) return;  // no selection: the pane keeps the last row
  if (m_shownRow && m_shownRow->row_index == rowIndex) return;
  showInDetail(m_model->rowResult(rowIndex));
}

void ResultsPanel::showInDetail(const std::optional<RowResult>& rowResult) {
  if (!rowResult) return;
  if (m_shownRow && *m_shownRow == *rowResult) return;
  m_shownRow = rowResult;
  m_detail->showRow(*rowResult);
}

void ResultsPanel::reselectShownRow() {
  updateSummary();
  if (!m_shownRow) return;
  const int row = m_model->rowOf(m_shownRow->row_index);
  if (row < 0) return;
  const QModelIndex index = m_model->index(row, ResultsModel::IdColumn);
  m_view->selectionModel()->setCurrentIndex(
      index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  m_view->scrollTo(index);
}

void ResultsPanel::updateSummary() {
  if (m_model->jobPath().isEmpty()) {
    m_summary->setText(tr("No job open"));
    return;
  }
  const bool isFiltered = m_model->query().status || !m_model->query().search.empty();
  const QString count = QLocale().toString(m_model->rowCount());
  m_summary->setText(isFiltered ? tr("%1 matching rows").arg(count) : tr("%1 rows").arg(count));
}

void ResultsPanel::showError(const QString& message) {
  m_error->setText(message);
  m_error->show();
}

void ResultsPanel::clearError() {
  m_error->clear();
  m_error->hide();
}

}  // namespace sluice::ui
