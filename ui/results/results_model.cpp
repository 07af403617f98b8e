#include "ui/results/results_model.h"

#include <QBrush>
#include <QColor>
#include <QFileInfo>
#include <algorithm>
#include <cmath>
#include <utility>

#include "app/generation_spec.h"
#include "engine/core/error.h"
#include "ui/common/job_reader.h"
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
      return JobTableColumn::LongestOutputTokens;
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

// Every sample's output tokens: "212" for one sample, "212 · 187" for two.
QString sampleTokensText(const sluice::RowSummary& row) {
  if (row.sample_output_tokens.empty()) return formatCount(row.output_tokens);
  QStringList counts;
  for (const int tokens : row.sample_output_tokens) counts << formatCount(tokens);
  return counts.join(QStringLiteral(" · "));
}

}  // namespace

// What a read of the view brings back.
struct ResultsModel::ViewRead {
  quint64 generation = 0;
  bool isSkipped = false;                      // superseded before it started: nothing was read
  QString error;                               // names the job file; the rest is empty then
  std::optional<sluice::GenerationSpec> spec;  // asked when opening; nullopt for unreadable params
  int64_t dataVersion = -1;
  bool isUnchanged = false;         // a refresh found nothing committed since dataVersion
  std::vector<int64_t> rowIndices;  // the whole view, or (isTail) the rows from numDense on
  bool isTail = false;
  size_t numDense = 0;    // isTail: the view's rows kept before the tail
  int64_t numStored = 0;  // isTail: every stored row, to tell a grown job from a changed one
};

// What a read of one page brings back.
struct ResultsModel::PageRead {
  quint64 generation = 0;
  int pageNumber = 0;
  bool isSkipped = false;
  std::vector<sluice::RowSummary> rows;  // one per view row of the page
  QString error;
};

QString ResultsModel::placeholderText() {
  return QStringLiteral("\u2026");
}

ResultsModel::ResultsModel(QObject* parent)
    : QAbstractTableModel(parent), m_reader(new JobReader(this)) {
  m_validityPool.setMaxThreadCount(1);  // the reader keeps one connection, used by one thread
}

ResultsModel::~ResultsModel() {
  m_validityPool.waitForDone();
}

void ResultsModel::setJobPath(const QString& jobPath) {
  // The window sets the path again when a run of the shown job starts: keep the selection.
  if (!jobPath.isEmpty() && jobPath == m_jobPath && (m_isJobOpen || m_isViewPending)) {
    refresh();
    return;
  }
  beginResetModel();
  clearPages();
  m_rowIndices.clear();
  m_validityReader.reset();
  ++m_jobGeneration;
  m_isJobOpen = false;
  m_dataVersion = -1;
  m_numRowReads = 0;
  m_jobPath = jobPath;
  m_reader->setJobPath(jobPath);
  endResetModel();
  m_isRefreshWanted = false;
  if (jobPath.isEmpty()) {
    ++m_viewGeneration;
    m_live->view = m_viewGeneration;
    m_isViewPending = false;
    return;
  }
  requestView(/*isOpening=*/true, /*isSortOnly=*/false);
}

void ResultsModel::setQuery(const sluice::JobTableQuery& query) {
  if (query == m_query) return;
  m_query = query;
  requestQueryView(/*isSortOnly=*/false);
}

void ResultsModel::requestQueryView(bool isSortOnly) {
  if (m_isJobOpen) {
    requestView(/*isOpening=*/false, isSortOnly);
  } else if (m_isViewPending) {
    requestView(/*isOpening=*/true, /*isSortOnly=*/false);  // the job opens on the new query
  }
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

void ResultsModel::requestView(bool isOpening, bool isSortOnly) {
  if (m_isViewPending) m_isRefreshWanted = false;  // the new read brings the latest rows too
  const quint64 generation = ++m_viewGeneration;
  m_live->view = generation;
  m_isViewPending = true;
  m_reader->post<ViewRead>(
      [generation, isOpening, query = m_query, live = m_live](JobFiles& files) {
        ViewRead read;
        read.generation = generation;
        if (live->view != generation) {
          read.isSkipped = true;  // another view was asked for before this one started
          return read;
        }
        try {
          const sluice::JobTable& table = files.openTable();
          if (isOpening) {
            try {
              // Read, not compiled: the validity reader compiles the grammar on its own pool.
              read.spec = sluice::spec_from_json(table.info().params);
            } catch (const sluice::Error&) {
              // A job whose parameters do not read as a spec (written by hand, or by an older
              // version) shows its rows without a Valid column rather than not at all.
            }
          }
          read.dataVersion = table.data_version();
          read.rowIndices = table.row_indices(query);
        } catch (const std::exception& e) {
          files.close();  // opened again by the next read
          read = ViewRead{};
          read.generation = generation;
          read.error = QString::fromStdString(e.what());
        }
        return read;
      },
      [this, isOpening, isSortOnly](const ViewRead& read) {
        if (read.generation != m_viewGeneration) return;  // a newer view is on its way
        m_isViewPending = false;
        if (!read.error.isEmpty()) {
          reportError(read.error);
          if (!isOpening && m_isJobOpen) {
            beginResetModel();  // what was shown may no longer be what the query asks
            clearPages();
            m_rowIndices.clear();
            endResetModel();
          }
        } else {
          if (isOpening) {
            m_isJobOpen = true;
            setSpec(read.spec);
          }
          applyView(read, isSortOnly);
          if (isOpening) emit jobOpened();
        }
        runWantedRefresh();
      });
}

void ResultsModel::setSpec(const std::optional<sluice::GenerationSpec>& spec) {
  m_validityReader.reset();
  if (spec && OutputValidity::forSpec(*spec))
    m_validityReader = std::make_shared<PageValidityReader>(m_jobPath.toStdString(), *spec);
}

void ResultsModel::applyView(const ViewRead& read, bool isSortOnly) {
  const bool isSameRows =
      read.dataVersion == m_dataVersion && read.rowIndices.size() == m_rowIndices.size();
  m_dataVersion = read.dataVersion;
  if (isSortOnly && isSameRows && !m_rowIndices.empty()) {
    applyNewOrder(read.rowIndices);
    return;
  }
  beginResetModel();
  clearPages();
  m_rowIndices = read.rowIndices;
  endResetModel();
}

void ResultsModel::applyNewOrder(std::vector<int64_t> fresh) {
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

void ResultsModel::refresh() {
  if (m_jobPath.isEmpty()) return;
  if (m_isViewPending) {
    m_isRefreshWanted = true;  // runs when the read under way comes back
    return;
  }
  if (!m_isJobOpen) {
    // The path may have been set before the worker created the file.
    if (!QFileInfo::exists(m_jobPath)) {
      emit refreshed(false);
      return;
    }
    requestView(/*isOpening=*/true, /*isSortOnly=*/false);
    return;
  }
  const bool isPlainRowOrder = !m_query.has_filters() &&
                               m_query.sort_column == JobTableColumn::RowIndex &&
                               !m_query.is_descending;
  // Indices are unique and ascending in row order, so m_rowIndices[k] == k holds exactly up to
  // the first row still missing (running, or not yet read). Rows are never deleted: everything
  // before that gap stays as it is, and only the range from it on needs reading (while a job
  // runs, the rows still in flight are the last few hundred).
  size_t numDense = 0;
  if (isPlainRowOrder) {
    size_t end = m_rowIndices.size();
    while (numDense < end) {
      const size_t middle = numDense + (end - numDense) / 2;
      if (m_rowIndices[middle] == static_cast<int64_t>(middle)) {
        numDense = middle + 1;
      } else {
        end = middle;
      }
    }
  }
  const quint64 generation = m_viewGeneration;  // a refresh does not supersede the view
  m_isViewPending = true;
  m_reader->post<ViewRead>(
      [generation, query = m_query, isPlainRowOrder, numDense, knownVersion = m_dataVersion,
       live = m_live](JobFiles& files) {
        ViewRead read;
        read.generation = generation;
        if (live->view != generation) {
          read.isSkipped = true;
          return read;
        }
        try {
          const sluice::JobTable& table = files.openTable();
          // Read before the rows: a commit in between makes the next refresh look again.
          read.dataVersion = table.data_version();
          if (read.dataVersion == knownVersion) {
            read.isUnchanged = true;
            return read;
          }
          if (isPlainRowOrder) {
            read.isTail = true;
            read.numDense = numDense;
            read.rowIndices = table.row_indices_from(static_cast<int64_t>(numDense));
            read.numStored = table.count({});
            // A file changed by other means (rows deleted in the sqlite3 shell): the whole view.
            if (static_cast<int64_t>(numDense + read.rowIndices.size()) != read.numStored) {
              read.isTail = false;
              read.rowIndices = table.row_indices(query);
            }
          } else {
            read.rowIndices = table.row_indices(query);
          }
        } catch (const std::exception& e) {
          files.close();
          read = ViewRead{};
          read.generation = generation;
          read.error = QString::fromStdString(e.what());
        }
        return read;
      },
      [this](const ViewRead& read) {
        if (read.generation != m_viewGeneration) return;  // the view changed meanwhile
        m_isViewPending = false;
        applyRefresh(read);
        runWantedRefresh();
      });
}

void ResultsModel::applyRefresh(const ViewRead& read) {
  if (!read.error.isEmpty()) {
    reportError(read.error);
    emit refreshed(false);
    return;
  }
  if (read.isUnchanged) {
    emit refreshed(false);
    return;
  }
  std::vector<int64_t> fresh;
  if (read.isTail) {
    fresh.assign(m_rowIndices.begin(),
                 m_rowIndices.begin() + static_cast<std::ptrdiff_t>(read.numDense));
    fresh.insert(fresh.end(), read.rowIndices.begin(), read.rowIndices.end());
  } else {
    fresh = read.rowIndices;
  }
  m_dataVersion = read.dataVersion;
  applyRefreshed(std::move(fresh));
  emit refreshed(true);
}

void ResultsModel::runWantedRefresh() {
  if (!m_isRefreshWanted) return;
  m_isRefreshWanted = false;
  refresh();
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
  // Only a new order of the rows shown keeps the selection: not when another view (a filter, a
  // refresh) is still on its way, whose rows may differ.
  requestQueryView(/*isSortOnly=*/!m_isViewPending);
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

void ResultsModel::readRow(qint64 rowIndex,
                           std::function<void(const std::optional<sluice::RowResult>&)> done) {
  if (m_jobPath.isEmpty()) return;
  ++m_numRowReads;
  struct RowRead {
    std::optional<sluice::RowResult> row;
    QString error;
  };
  m_reader->post<RowRead>(
      [rowIndex](JobFiles& files) {
        RowRead read;
        try {
          read.row = files.openTable().row(rowIndex);
        } catch (const std::exception& e) {
          files.close();
          read.error = QString::fromStdString(e.what());
        }
        return read;
      },
      [this, done = std::move(done)](const RowRead& read) {
        --m_numRowReads;  // setJobPath() zeroes the count: the reader drops an older job's reads
        if (!read.error.isEmpty()) {
          reportError(read.error);
          return;
        }
        if (done) done(read.row);
      });
}

int ResultsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rowIndices.size());
}

int ResultsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : NumColumns;
}

bool ResultsModel::isRowRead(int row) const {
  return row >= 0 && row < rowCount() && m_pages.contains(row / kPageRows);
}

bool ResultsModel::isBusy() const {
  return m_isViewPending || !m_pendingPages.empty() || m_numValidityReads > 0 || m_numRowReads > 0;
}

const sluice::RowSummary* ResultsModel::summaryAt(int row) const {
  const int pageNumber = row / kPageRows;
  // Every change of m_rowIndices clears the pages, so a cached page always covers `row`.
  auto cached = m_pages.find(pageNumber);
  if (cached == m_pages.end()) {
    requestPage(pageNumber);
    return nullptr;
  }
  Q_ASSERT(static_cast<size_t>(row % kPageRows) < cached->second.rows.size());
  m_lru.splice(m_lru.begin(), m_lru, cached->second.lruPosition);
  return &cached->second.rows[static_cast<size_t>(row % kPageRows)];
}

void ResultsModel::requestPage(int pageNumber) const {
  // A page that failed is read again when the view changes, not on every repaint.
  if (m_failedPages.contains(pageNumber) || !m_pendingPages.insert(pageNumber).second) return;
  const size_t first = static_cast<size_t>(pageNumber) * kPageRows;
  const size_t last = std::min(first + kPageRows, m_rowIndices.size());
  std::vector<int64_t> wanted(m_rowIndices.begin() + static_cast<std::ptrdiff_t>(first),
                              m_rowIndices.begin() + static_cast<std::ptrdiff_t>(last));
  auto* self = const_cast<ResultsModel*>(this);  // data() is const; the cache is not
  m_reader->post<PageRead>(
      [generation = m_pageGeneration, pageNumber, wanted = std::move(wanted),
       live = m_live](JobFiles& files) {
        PageRead read;
        read.generation = generation;
        read.pageNumber = pageNumber;
        if (live->pages != generation) {
          read.isSkipped = true;  // the view changed before it started
          return read;
        }
        std::vector<sluice::RowSummary> summaries;
        try {
          summaries = files.openTable().summaries(wanted);
        } catch (const std::exception& e) {
          files.close();
          read.error = QString::fromStdString(e.what());
          return read;
        }
        // summaries() leaves out rows it cannot find (the file was replaced under us): keep one
        // entry per view row so positions stay right, with only the index known.
        read.rows.resize(wanted.size());
        size_t next = 0;
        for (size_t i = 0; i < wanted.size(); ++i) {
          if (next < summaries.size() && summaries[next].row_index == wanted[i]) {
            read.rows[i] = std::move(summaries[next++]);
          } else {
            read.rows[i].row_index = wanted[i];
            read.rows[i].id = std::to_string(wanted[i]);
          }
        }
        return read;
      },
      [self](const PageRead& read) { self->onPageRead(read); });
}

void ResultsModel::onPageRead(const PageRead& read) {
  if (read.generation != m_pageGeneration) return;  // the view changed while it was read
  m_pendingPages.erase(read.pageNumber);
  if (!read.error.isEmpty()) {
    m_failedPages.insert(read.pageNumber);
    reportError(read.error);
    return;
  }
  Page page;
  page.rows = read.rows;
  const bool hasUncheckedRows =
      m_validityReader && std::any_of(page.rows.begin(), page.rows.end(), needsValidityCheck);
  page.isValidityRead = !hasUncheckedRows;
  if (hasUncheckedRows) {
    std::vector<int64_t> rowIndices;
    rowIndices.reserve(page.rows.size());
    for (const sluice::RowSummary& row : page.rows) rowIndices.push_back(row.row_index);
    requestValidity(read.pageNumber, std::move(rowIndices));
  }
  if (static_cast<int>(m_pages.size()) >= kMaxCachedPages) {
    m_pages.erase(m_lru.back());
    m_lru.pop_back();
  }
  m_lru.push_front(read.pageNumber);
  page.lruPosition = m_lru.begin();
  const int numRows = static_cast<int>(page.rows.size());
  m_pages.emplace(read.pageNumber, std::move(page));
  const int firstRow = read.pageNumber * kPageRows;
  if (numRows > 0)
    emit dataChanged(index(firstRow, 0), index(firstRow + numRows - 1, NumColumns - 1));
}

void ResultsModel::clearPages() const {
  m_pages.clear();
  m_lru.clear();
  m_pendingPages.clear();
  m_failedPages.clear();
  m_live->pages = ++m_pageGeneration;
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
  if (row == nullptr) {
    // Its page is on its way (dataChanged follows): a placeholder, never a guess.
    if (role == Qt::DisplayRole) return placeholderText();
    if (role == Qt::ToolTipRole) return tr("Reading this row from the job file…");
    return {};
  }
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
    if (index.column() == TokensColumn && row->sample_output_tokens.size() > 1) {
      QStringList lines;
      for (size_t i = 0; i < row->sample_output_tokens.size(); ++i)
        lines
            << tr("sample %1: %2 tokens").arg(i + 1).arg(formatCount(row->sample_output_tokens[i]));
      return lines.join('\n');
    }
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
      return tr("%1 in · %2 out").arg(formatCount(row.prompt_tokens), sampleTokensText(row));
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
    return tr(
        "Prompt tokens in, output tokens out: every sample's, in order (\"212 · 187\": sample 1, "
        "sample 2); sorts by the longest sample");
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
