#include "ui/results/results_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/common/number_format.h"
#include "ui/results/results_model.h"
#include "ui/results/row_detail_pane.h"

namespace sluice::ui {
namespace {

// The status and validity filters' entries carry this for "all rows".
constexpr int kAllRows = -1;

// Returns the value a filter's chosen entry carries, or nullopt for its "all rows" entry.
template <typename Value>
std::optional<Value> chosenFilter(const QComboBox& filter) {
  const int value = filter.currentData().toInt();
  return value == kAllRows ? std::nullopt : std::optional<Value>(static_cast<Value>(value));
}

// QSettings keys: the widths the user gave the fixed-width columns, and the table / detail split.
constexpr const char* kColumnWidthsKey = "results/columnWidths";
constexpr const char* kSplitterKey = "results/splitter";

// Prompt and Output share whatever width the other columns leave; the others keep their width.
bool isStretchColumn(int column) {
  return column == ResultsModel::PromptColumn || column == ResultsModel::OutputColumn;
}

// A column's default width: its header or the widest value it usually shows, plus padding.
int defaultColumnWidth(const QTableView& view, int column) {
  const char* widest = "";
  switch (column) {
    case ResultsModel::IdColumn:
      widest = "0000000";
      break;
    case ResultsModel::StatusColumn:
      widest = "skipped";
      break;
    case ResultsModel::TokensColumn:
      widest = "999 in · 9,999 out";
      break;
    case ResultsModel::TimeColumn:
      widest = "99,999.9";
      break;
    case ResultsModel::FinishReasonColumn:
      widest = "length";
      break;
    default:
      break;
  }
  const QString header =
      view.model()->headerData(column, Qt::Horizontal, Qt::DisplayRole).toString();
  const int padding = 2 * view.fontMetrics().averageCharWidth() + 12;  // margins, sort arrow
  return std::max(view.fontMetrics().horizontalAdvance(QString::fromUtf8(widest)),
                  view.horizontalHeader()->fontMetrics().horizontalAdvance(header)) +
         padding;
}

}  // namespace

ResultsPanel::ResultsPanel(QWidget* parent) : QWidget(parent) {
  m_model = new ResultsModel(this);
  QHBoxLayout* filters = buildFilters();
  buildTable();
  m_detail = new RowDetailPane(this);
  // The table gets the width (its columns need it); the detail pane sits below it.
  m_splitter = new QSplitter(Qt::Vertical, this);
  m_splitter->addWidget(m_view);
  m_splitter->addWidget(m_detail);
  m_splitter->setStretchFactor(0, 1);
  m_splitter->setStretchFactor(1, 1);
  m_splitter->setChildrenCollapsible(false);
  m_splitter->restoreState(QSettings().value(kSplitterKey).toByteArray());
  connect(m_splitter, &QSplitter::splitterMoved, this,
          [this] { QSettings().setValue(kSplitterKey, m_splitter->saveState()); });

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(filters);
  layout->addWidget(m_error);
  layout->addWidget(m_splitter, 1);

  m_searchDelay.setSingleShot(true);
  m_searchDelay.setInterval(kSearchDelayMs);
  connect(&m_searchDelay, &QTimer::timeout, this, &ResultsPanel::applySearch);
  connect(m_search, &QLineEdit::textChanged, this, [this] { m_searchDelay.start(); });
  connect(m_search, &QLineEdit::returnPressed, this, &ResultsPanel::applySearch);
  connect(m_statusFilter, &QComboBox::currentIndexChanged, this, &ResultsPanel::applyFilters);
  connect(m_validityFilter, &QComboBox::currentIndexChanged, this, &ResultsPanel::applyFilters);
  connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &ResultsPanel::showCurrentRow);
  connect(m_model, &ResultsModel::modelReset, this, &ResultsPanel::reselectShownRow);
  connect(m_model, &ResultsModel::rowsInserted, this, &ResultsPanel::updateSummary);
  connect(m_model, &ResultsModel::jobOpened, this, &ResultsPanel::showJobKind);
  connect(m_model, &ResultsModel::refreshed, this, &ResultsPanel::onRefreshed);
  connect(m_model, &ResultsModel::errorOccurred, this, &ResultsPanel::showError);
  connect(m_model, &ResultsModel::validityTextsRead, this,
          [this](qint64 rowIndex, const QStringList& texts) {
            if (m_shownRow && m_shownRow->row_index == rowIndex) m_detail->setValidity(texts);
          });
  connect(m_detail, &RowDetailPane::rowAloneRequested, this, &ResultsPanel::rowAloneRequested);
  updateSummary();
}

QHBoxLayout* ResultsPanel::buildFilters() {
  m_statusFilter = new QComboBox(this);
  m_statusFilter->addItem(tr("All rows"), kAllRows);
  m_statusFilter->addItem(tr("Done"), static_cast<int>(RowStatus::Done));
  m_statusFilter->addItem(tr("Failed"), static_cast<int>(RowStatus::Failed));
  m_statusFilter->addItem(tr("Skipped"), static_cast<int>(RowStatus::Skipped));
  m_validityFilter = new QComboBox(this);
  m_validityFilter->setObjectName(QStringLiteral("validityFilter"));
  m_validityFilter->addItem(tr("All outputs"), kAllRows);
  m_validityFilter->addItem(tr("Valid"), static_cast<int>(RowValidity::Valid));
  m_validityFilter->addItem(tr("Invalid"), static_cast<int>(RowValidity::Invalid));
  m_validityFilter->setToolTip(
      tr("Rows whose outputs all follow the job's schema or grammar, or rows with one that does "
         "not (as judged when each row finished); rows without a verdict show under All only"));
  m_validityFilter->hide();  // until a job with a grammar or schemas is shown
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
  filters->addWidget(m_validityFilter);
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
  // The text columns stretch to use the width, so every column fits without a horizontal scroll
  // (Time and Finish included on a 1280-wide screen); the user's widths for the others are kept.
  QHeaderView* header = m_view->horizontalHeader();
  header->setStretchLastSection(false);
  header->setMinimumSectionSize(m_view->fontMetrics().averageCharWidth() * 6);
  const QVariantList savedWidths = QSettings().value(kColumnWidthsKey).toList();
  for (int column = 0; column < ResultsModel::NumColumns; ++column) {
    if (isStretchColumn(column)) {
      header->setSectionResizeMode(column, QHeaderView::Stretch);
      continue;
    }
    header->setSectionResizeMode(column, QHeaderView::Interactive);
    const int saved = column < savedWidths.size() ? savedWidths[column].toInt() : 0;
    m_view->setColumnWidth(column, saved > 0 ? saved : defaultColumnWidth(*m_view, column));
  }
  connect(header, &QHeaderView::sectionResized, this, &ResultsPanel::saveColumnWidths);
}

void ResultsPanel::saveColumnWidths(int column) {
  if (isStretchColumn(column)) return;  // follows the window, not the user
  QVariantList widths;
  for (int i = 0; i < ResultsModel::NumColumns; ++i)
    widths << (isStretchColumn(i) ? 0 : m_view->columnWidth(i));
  QSettings().setValue(kColumnWidthsKey, widths);
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
  showJobKind();  // as for free text until the job is read
  updateSummary();
  emit jobPathChanged(jobPath);
}

void ResultsPanel::showJobKind() {
  m_view->setColumnHidden(ResultsModel::ValidColumn, !m_model->hasGrammar());
  // Free text has no verdicts: a validity filter left on would hide every row.
  m_validityFilter->setVisible(m_model->hasGrammar());
  if (!m_model->hasGrammar()) m_validityFilter->setCurrentIndex(0);
  updateSummary();
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
  // The read runs on the model's reader; one asked while another is under way runs after it.
  m_model->refresh();
}

void ResultsPanel::onRefreshed(bool hasChanged) {
  if (!hasChanged) return;
  // The shown row may have been replaced (a failed row retried); the pane updates only if so.
  if (m_shownRow) showRowRead(m_shownRow->row_index);
  updateSummary();
}

void ResultsPanel::showRowAloneResult(qint64 rowIndex, bool identical, const QString& details) {
  m_detail->showRowAloneResult(rowIndex, identical, details);
}

void ResultsPanel::applyFilters() {
  clearError();
  sluice::JobTableQuery query = m_model->query();
  query.status = chosenFilter<RowStatus>(*m_statusFilter);
  query.validity = chosenFilter<RowValidity>(*m_validityFilter);
  m_model->setQuery(query);
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
  showRowRead(rowIndex);
}

void ResultsPanel::showRowRead(qint64 rowIndex) {
  m_model->readRow(rowIndex, [this, rowIndex](const std::optional<RowResult>& rowResult) {
    // The person may have moved on while it was read: only the current row is shown.
    const qint64 current = m_model->rowIndexAt(m_view->currentIndex().row());
    if (current != rowIndex) return;
    showInDetail(rowResult);
  });
}

void ResultsPanel::showInDetail(const std::optional<RowResult>& rowResult) {
  if (!rowResult) return;
  if (m_shownRow && *m_shownRow == *rowResult) return;
  m_shownRow = rowResult;
  m_detail->showRow(*rowResult);
  m_model->requestValidityTexts(*rowResult);  // checked on the pool: its answer fills the pane
}

void ResultsPanel::reselectShownRow() {
  updateSummary();
  if (!m_shownRow) return;
  const int row = m_model->rowOf(m_shownRow->row_index);
  if (row < 0) {
    // The filter hides the row: the pane must not keep showing a row the table does not have.
    m_shownRow.reset();
    m_detail->clear();
    return;
  }
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
  if (!m_model->isJobOpen() && m_model->isBusy()) {
    m_summary->setText(tr("Reading the job…"));
    return;
  }
  const bool isFiltered = m_model->query().has_filters();
  const int numRows = m_model->rowCount();
  const QString count = formatCount(numRows);
  if (isFiltered) {
    m_summary->setText(numRows == 1 ? tr("1 matching row") : tr("%1 matching rows").arg(count));
  } else {
    m_summary->setText(numRows == 1 ? tr("1 row") : tr("%1 rows").arg(count));
  }
}

void ResultsPanel::showError(const QString& message) {
  m_error->setText(message);
  m_error->show();
  updateSummary();
}

void ResultsPanel::clearError() {
  m_error->clear();
  m_error->hide();
}

}  // namespace sluice::ui
