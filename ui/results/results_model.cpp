#include "ui/results/results_model.h"

#include <QBrush>
#include <QColor>
#include <QFileInfo>
#include <algorithm>
#include <cmath>
#include <utility>

#include "app/generation_spec.h"
#include "engine/core/error.h"
#include "ui/common/number_format.h"
#include "ui/results/output_validity.h"

namespace sluice::ui {
namespace {

constexpr size_t kMaxInsertRuns = 32;

// One contiguous block of rows that a refresh inserts: `count` rows at view row `position`.
struct InsertRun {
  int position = 0;
  int count = 0;
};

// Returns the runs that turn `old` into `fresh` by insertions only, in increasing position (so
// inserting them in that order keeps every earlier position valid), or nullopt when an old row
// is missing from fresh or out of its order. Row indices are unique, so the greedy walk finds
// the match whenever one exists.
std::optional<std::vector<InsertRun>> insertion_runs(const std::vector<int64_t>& old,
                                                     const std::vector<int64_t>& fresh) {
  if (fresh.size() < old.size()) return std::nullopt;
  std::vector<InsertRun> runs;
  size_t num_matched = 0;
  for (size_t position = 0; position < fresh.size(); ++position) {
    if (num_matched < old.size() && fresh[position] == old[num_matched]) {
      ++num_matched;
      continue;
    }
    const int row = static_cast<int>(position);
    if (!runs.empty() && runs.back().position + runs.back().count == row) {
      ++runs.back().count;
    } else {
      runs.push_back({row, 1});
    }
  }
  if (num_matched != old.size()) return std::nullopt;
  return runs;
}

sluice::JobTableColumn sort_column_for(int column) {
  switch (column) {
    case ResultsModel::StatusColumn:
      return JobTableColumn::Status;
    case ResultsModel::PromptColumn:
      return JobTableColumn::Prompt;
    case ResultsModel::OutputColumn:
      return JobTableColumn::Output;
    case ResultsModel::TokensColumn:
      return JobTableColumn::OutputTokens;
    case ResultsModel::TimeColumn:
      return JobTableColumn::TotalMs;
    case ResultsModel::FinishReasonColumn:
      return JobTableColumn::FinishReason;
    case ResultsModel::ValidColumn:
      return JobTableColumn::Valid;
    default:
      // Ids usually follow the source's order, and many rows have none: the id column sorts by
      // row index, which is also the order a job is written in.
      return JobTableColumn::RowIndex;
  }
}

// True when the row has outputs but no stored verdict: it was stored before validity was kept.
bool needsValidityCheck(const sluice::RowSummary& row) {
  return row.status == RowStatus::Done && row.num_samples > 0 &&
         row.validity == RowValidity::Unknown;
}

// A head on one line: a table cell shows no line breaks, so they become a visible mark.
QString one_line(const std::string& text) {
  QString line = QString::fromStdString(text);
  line.replace(QLatin1String("\r\n"), QStringLiteral(" \u21b5 "));
  line.replace(QLatin1Char('\n'), QStringLiteral(" \u21b5 "));
  line.replace(QLatin1Char('\t'), QLatin1Char(' '));
  return line;
}

}  // namespace

ResultsModel::ResultsModel(QObject* parent) : QAbstractTableModel(parent) {
  m_validityPool.setMaxThreadCount(1);  // the reader keeps one connection, used by one thread
}

ResultsModel::~ResultsModel() {
  m_validityPool.waitForDone();
}

bool ResultsModel::setJobPath(const QString& jobPath) {
  // The window sets the path again when a run of the shown job starts: keep the selection.
  if (m_table && jobPath == m_jobPath) {
    refresh();
    return true;
  }
  beginResetModel();
  clearPages();
  m_rowIndices.clear();
  m_table.reset();
  m_validityReader.reset();
  ++m_jobGeneration;
  m_dataVersion = -1;
  m_jobPath = jobPath;
  bool isOpen = jobPath.isEmpty();
  if (!jobPath.isEmpty()) {
    try {
      m_table = sluice::JobTable::open(jobPath.toStdString());
      m_dataVersion = m_table->data_version();
      m_rowIndices = m_table->row_indices(m_query);
      try {
        // Read, not compiled: the reader compiles the job's grammar on the validity pool.
        const sluice::GenerationSpec spec = sluice::spec_from_json(m_table->info().params);
        if (OutputValidity::forSpec(spec))
          m_validityReader = std::make_shared<PageValidityReader>(jobPath.toStdString(), spec);
      } catch (const sluice::Error&) {
        // A job whose parameters do not read as a spec (written by hand, or by an older
        // version) shows its rows without a Valid column rather than not at all.
      }
      isOpen = true;
    } catch (const sluice::Error& e) {
      m_table.reset();
      m_rowIndices.clear();
      reportError(QString::fromStdString(e.what()));
    }
  }
  endResetModel();
  return isOpen;
}

void ResultsModel::setQuery(const sluice::JobTableQuery& query) {
  if (query == m_query) return;
  m_query = query;
  reload();
}

void ResultsModel::setStatusFilter(std::optional<sluice::RowStatus> status) {
  sluice::JobTableQuery query = m_query;
  query.status = status;
  setQuery(query);
}

void ResultsModel::setSearchText(const QString& text) {
  sluice::JobTableQuery query = m_query;
  query.search = text.toStdString();
  setQuery(query);
}

void ResultsModel::setValidityFilter(std::optional<sluice::RowValidity> validity) {
  sluice::JobTableQuery query = m_query;
  query.validity = validity;
  setQuery(query);
}

void ResultsModel::reload() {
  beginResetModel();
  clearPages();
  m_rowIndices.clear();
  if (m_table) {
    try {
      m_dataVersion = m_table->data_version();
      m_rowIndices = m_table->row_indices(m_query);
    } catch (const sluice::Error& e) {
      m_rowIndices.clear();
      reportError(QString::fromStdString(e.what()));
    }
  }
  endResetModel();
}

bool ResultsModel::refresh() {
  if (!m_table) {
    // The path may have been set before the worker created the file.
    if (m_jobPath.isEmpty() || !QFileInfo::exists(m_jobPath)) return false;
    return setJobPath(m_jobPath);
  }
  try {
    // Read before the rows: a commit in between makes the next refresh look again.
    const int64_t version = m_table->data_version();
    if (version == m_dataVersion) return false;
    std::optional<std::vector<int64_t>> fresh = readGrownRowOrder();
    if (!fresh) fresh = m_table->row_indices(m_query);
    m_dataVersion = version;
    applyRefreshed(std::move(*fresh));
    return true;
  } catch (const sluice::Error& e) {
    reportError(QString::fromStdString(e.what()));
    return false;
  }
}

std::optional<std::vector<int64_t>> ResultsModel::readGrownRowOrder() const {
  const bool isPlainRowOrder = !m_query.has_filters() &&
                               m_query.sort_column == JobTableColumn::RowIndex &&
                               !m_query.is_descending;
  if (!isPlainRowOrder) return std::nullopt;
  // Indices are unique and ascending, so m_rowIndices[k] == k holds exactly up to the first row
  // still missing (running, or not yet read). Rows are never deleted: everything before that gap
  // stays as it is, and only the range from it on needs reading (while a job runs, the rows
  // still in flight are the last few hundred).
  size_t numDense = 0;
  size_t end = m_rowIndices.size();
  while (numDense < end) {
    const size_t middle = numDense + (end - numDense) / 2;
    if (m_rowIndices[middle] == static_cast<int64_t>(middle)) {
      numDense = middle + 1;
    } else {
      end = middle;
    }
  }
  std::vector<int64_t> fresh(m_rowIndices.begin(),
                             m_rowIndices.begin() + static_cast<std::ptrdiff_t>(numDense));
  const std::vector<int64_t> tail = m_table->row_indices_from(static_cast<int64_t>(numDense));
  fresh.insert(fresh.end(), tail.begin(), tail.end());
  // A file changed by other means (rows deleted in the sqlite3 shell): read the whole view.
  if (static_cast<int64_t>(fresh.size()) != m_table->count({})) return std::nullopt;
  return fresh;
}

void ResultsModel::applyRefreshed(std::vector<int64_t> fresh) {
  clearPages();  // rows may have been replaced in place
  const auto runs = insertion_runs(m_rowIndices, fresh);
  // Each run moves the tail of the index vector and of the view's header sections: past a few
  // dozen runs (many rows landing all over a sorted view) a reset is the cheaper way.
  if (!runs || runs->size() > kMaxInsertRuns) {
    beginResetModel();
    m_rowIndices = std::move(fresh);
    endResetModel();
    return;
  }
  // A stored row can be replaced (a failed row retried) without moving: its cells may change.
  if (!m_rowIndices.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, NumColumns - 1));
  for (const InsertRun& run : *runs) {
    beginInsertRows(QModelIndex(), run.position, run.position + run.count - 1);
    const auto first = fresh.begin() + run.position;
    m_rowIndices.insert(m_rowIndices.begin() + run.position, first, first + run.count);
    // Positions moved: pages read since the last clear (views and testers read data between
    // the insertions) hold rows at their old places.
    clearPages();
    endInsertRows();
  }
}

void ResultsModel::sort(int column, Qt::SortOrder order) {
  sluice::JobTableQuery query = m_query;
  query.sort_column = sort_column_for(column);
  query.is_descending = order == Qt::DescendingOrder;
  if (query == m_query) return;
  m_query = query;
  if (!m_table) return;
  std::vector<int64_t> fresh;
  int64_t version = -1;
  try {
    version = m_table->data_version();
    fresh = m_table->row_indices(m_query);
  } catch (const sluice::Error& e) {
    reportError(QString::fromStdString(e.what()));
    reload();
    return;
  }
  if (version != m_dataVersion || fresh.size() != m_rowIndices.size()) {
    // Rows arrived too: not only a new order of the same rows.
    beginResetModel();
    clearPages();
    m_dataVersion = version;
    m_rowIndices = std::move(fresh);
    endResetModel();
    return;
  }
  emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
  std::unordered_map<int64_t, int> newRowOf;
  newRowOf.reserve(fresh.size());
  for (size_t row = 0; row < fresh.size(); ++row)
    newRowOf.emplace(fresh[row], static_cast<int>(row));
  const QModelIndexList before = persistentIndexList();
  QModelIndexList after;
  after.reserve(before.size());
  for (const QModelIndex& persistent : before) {
    const auto found = newRowOf.find(m_rowIndices[static_cast<size_t>(persistent.row())]);
    after.append(found == newRowOf.end() ? QModelIndex()
                                         : index(found->second, persistent.column()));
  }
  m_rowIndices = std::move(fresh);
  clearPages();
  changePersistentIndexList(before, after);
  emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
}

qint64 ResultsModel::rowIndexAt(int row) const {
  if (row < 0 || row >= rowCount()) return -1;
  return m_rowIndices[static_cast<size_t>(row)];
}

int ResultsModel::rowOf(qint64 rowIndex) const {
  const auto found = std::find(m_rowIndices.begin(), m_rowIndices.end(), rowIndex);
  return found == m_rowIndices.end() ? -1 : static_cast<int>(found - m_rowIndices.begin());
}

void ResultsModel::requestValidityTexts(const sluice::RowResult& row) {
  if (!m_validityReader) return;
  m_validityPool.start([this, reader = m_validityReader, generation = m_jobGeneration, row] {
    QStringList texts = reader->describe(row);
    QMetaObject::invokeMethod(
        this,
        [this, generation, rowIndex = row.row_index, texts = std::move(texts)] {
          if (generation == m_jobGeneration) emit validityTextsRead(rowIndex, texts);
        },
        Qt::QueuedConnection);
  });
}

std::optional<sluice::RowResult> ResultsModel::rowResult(qint64 rowIndex) const {
  if (!m_table) return std::nullopt;
  try {
    return m_table->row(rowIndex);
  } catch (const sluice::Error& e) {
    reportError(QString::fromStdString(e.what()));
    return std::nullopt;
  }
}

int ResultsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rowIndices.size());
}

int ResultsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : NumColumns;
}

const sluice::RowSummary* ResultsModel::summaryAt(int row) const {
  const int pageNumber = row / kPageRows;
  // Every change of m_rowIndices clears the pages, so a cached page always covers `row`.
  auto cached = m_pages.find(pageNumber);
  if (cached != m_pages.end()) {
    Q_ASSERT(static_cast<size_t>(row % kPageRows) < cached->second.rows.size());
    m_lru.splice(m_lru.begin(), m_lru, cached->second.lruPosition);
    return &cached->second.rows[static_cast<size_t>(row % kPageRows)];
  }
  const size_t first = static_cast<size_t>(pageNumber) * kPageRows;
  const size_t last = std::min(first + kPageRows, m_rowIndices.size());
  const std::vector<int64_t> wanted(m_rowIndices.begin() + static_cast<std::ptrdiff_t>(first),
                                    m_rowIndices.begin() + static_cast<std::ptrdiff_t>(last));
  std::vector<sluice::RowSummary> read;
  try {
    read = m_table->summaries(wanted);
  } catch (const sluice::Error& e) {
    reportError(QString::fromStdString(e.what()));
  }
  // summaries() leaves out rows it cannot find (the file was replaced under us): keep one entry
  // per view row so positions stay right, with only the index known.
  Page page;
  page.rows.resize(wanted.size());
  size_t next = 0;
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (next < read.size() && read[next].row_index == wanted[i]) {
      page.rows[i] = std::move(read[next++]);
    } else {
      page.rows[i].row_index = wanted[i];
      page.rows[i].id = std::to_string(wanted[i]);
    }
  }
  const bool hasUncheckedRows =
      m_validityReader && std::any_of(page.rows.begin(), page.rows.end(), needsValidityCheck);
  page.isValidityRead = !hasUncheckedRows;
  if (hasUncheckedRows) requestValidity(pageNumber, wanted);
  if (static_cast<int>(m_pages.size()) >= kMaxCachedPages) {
    m_pages.erase(m_lru.back());
    m_lru.pop_back();
  }
  m_lru.push_front(pageNumber);
  page.lruPosition = m_lru.begin();
  const auto inserted = m_pages.emplace(pageNumber, std::move(page)).first;
  return &inserted->second.rows[static_cast<size_t>(row % kPageRows)];
}

void ResultsModel::clearPages() const {
  m_pages.clear();
  m_lru.clear();
  ++m_pageGeneration;
}

void ResultsModel::requestValidity(int pageNumber, std::vector<int64_t> rowIndices) const {
  ++m_numValidityReads;
  auto* self = const_cast<ResultsModel*>(this);  // data() is const; the cache is not
  m_validityPool.start([self, reader = m_validityReader, generation = m_pageGeneration, pageNumber,
                        rowIndices = std::move(rowIndices)] {
    std::string error;
    std::vector<std::optional<bool>> isValid = reader->read(rowIndices, error);
    // Queued even when it could run now: a view never gets dataChanged while it asks for data.
    QMetaObject::invokeMethod(
        self,
        [self, generation, pageNumber, isValid = std::move(isValid),
         error = QString::fromStdString(error)] {
          self->onValidityRead(generation, pageNumber, isValid, error);
        },
        Qt::QueuedConnection);
  });
}

void ResultsModel::onValidityRead(quint64 generation, int pageNumber,
                                  std::vector<std::optional<bool>> isValid, const QString& error) {
  --m_numValidityReads;
  if (generation != m_pageGeneration) return;  // the view changed while it was read
  if (!error.isEmpty()) reportError(error);
  const auto page = m_pages.find(pageNumber);
  if (page == m_pages.end()) return;  // dropped from the cache meanwhile: read again when shown
  page->second.isValid = std::move(isValid);
  page->second.isValidityRead = true;
  const int firstRow = pageNumber * kPageRows;
  const int lastRow = firstRow + static_cast<int>(page->second.rows.size()) - 1;
  emit dataChanged(index(firstRow, ValidColumn), index(lastRow, ValidColumn));
}

void ResultsModel::reportError(const QString& message) const {
  // Errors surface from const readers (data() reading a page); the signal is still the way out.
  emit const_cast<ResultsModel*>(this)->errorOccurred(message);
}

QVariant ResultsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  if (role == RowIndexRole) return QVariant::fromValue<qint64>(rowIndexAt(index.row()));
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != Qt::ForegroundRole &&
      role != Qt::TextAlignmentRole && role != StatusRole) {
    return {};
  }
  if (role == Qt::TextAlignmentRole) {
    if (index.column() == ValidColumn) return QVariant::fromValue(Qt::Alignment(Qt::AlignCenter));
    const bool isNumber = index.column() == TokensColumn || index.column() == TimeColumn;
    return QVariant::fromValue(Qt::Alignment(isNumber ? Qt::AlignRight | Qt::AlignVCenter
                                                      : Qt::AlignLeft | Qt::AlignVCenter));
  }
  const sluice::RowSummary* row = summaryAt(index.row());
  if (role == StatusRole) return QString::fromUtf8(to_string(row->status));
  if (role == Qt::ForegroundRole) {
    if (row->status == RowStatus::Failed) return QBrush(QColor(0xc6, 0x28, 0x28));
    if (row->status == RowStatus::Skipped) return QBrush(QColor(0x75, 0x75, 0x75));
    return {};
  }
  if (role == Qt::ToolTipRole) {
    if (index.column() == ValidColumn && m_validityReader && needsValidityCheck(*row)) {
      return tr(
          "Checked when shown: this row was stored before validity was kept, so it sorts and "
          "filters as having no verdict");
    }
    if (index.column() == PromptColumn) return QString::fromStdString(row->prompt_head);
    if (index.column() == OutputColumn) {
      if (!row->error_head.empty()) return QString::fromStdString(row->error_head);
      QString tip = QString::fromStdString(row->output_head);
      if (row->num_samples > 1) tip += tr("\n\n(sample 1 of %1)").arg(row->num_samples);
      return tip;
    }
    return {};
  }
  if (index.column() == ValidColumn) return validText(*row, index.row());
  return displayData(*row, index.column());
}

QString ResultsModel::validText(const sluice::RowSummary& row, int viewRow) const {
  if (row.validity != RowValidity::Unknown)
    return row.validity == RowValidity::Valid ? QStringLiteral("✓") : QStringLiteral("✗");
  if (!m_validityReader || !needsValidityCheck(row)) return QString();
  const Page& page = m_pages.at(viewRow / kPageRows);
  if (!page.isValidityRead) return QStringLiteral("…");
  const size_t inPage = static_cast<size_t>(viewRow % kPageRows);
  if (page.isValid.empty() || !page.isValid[inPage]) return QString();
  return *page.isValid[inPage] ? QStringLiteral("✓") : QStringLiteral("✗");
}

QVariant ResultsModel::displayData(const sluice::RowSummary& row, int column) const {
  switch (column) {
    case IdColumn:
      return QString::fromStdString(row.id);
    case StatusColumn:
      return QString::fromUtf8(to_string(row.status));
    case PromptColumn:
      return one_line(row.prompt_head);
    case OutputColumn:
      // A failed or skipped row has no output; its error is what a reader needs to see.
      return one_line(row.status == RowStatus::Done ? row.output_head : row.error_head);
    case TokensColumn:
      if (row.status == RowStatus::Skipped) return QString();
      return tr("%1 in · %2 out")
          .arg(formatCount(row.prompt_tokens), formatCount(row.output_tokens));
    case TimeColumn:
      if (std::isnan(row.total_ms) || row.status == RowStatus::Skipped) return QString();
      return formatDecimal(row.total_ms, 1);
    case FinishReasonColumn:
      return QString::fromStdString(row.finish_reason);
    default:
      return {};
  }
}

QVariant ResultsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation == Qt::Vertical) {
    if (role == Qt::DisplayRole && section >= 0 && section < rowCount())
      return QString::number(rowIndexAt(section));
    return {};
  }
  if (role == Qt::ToolTipRole && section == ValidColumn)
    return tr(
        "Whether the output (every sample's) is complete and follows the job's schema or "
        "grammar, as judged when the row finished; sorts ✗, ✓, then rows without a verdict");
  if (role == Qt::ToolTipRole && section == TokensColumn)
    return tr("Prompt tokens in, output tokens out (of the first sample); sorts by output tokens");
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case IdColumn:
      return tr("ID");
    case StatusColumn:
      return tr("Status");
    case PromptColumn:
      return tr("Prompt");
    case OutputColumn:
      return tr("Output");
    case TokensColumn:
      return tr("Tokens");
    case TimeColumn:
      return tr("Time (ms)");
    case FinishReasonColumn:
      return tr("Finish");
    case ValidColumn:
      return tr("Valid");
    default:
      return {};
  }
}

}  // namespace sluice::ui
