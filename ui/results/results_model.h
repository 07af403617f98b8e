// The results table's model: one job file's rows, filtered and sorted by JobTable, read a page at
// a time. It keeps only the ordered row indices of the view (8 bytes a row) and an LRU of a few
// pages of short summaries, so a job of 100k+ rows opens at once and never has its outputs in
// memory. Every read of the job (the view's row order, its pages, a row in full) runs on a
// JobReader (ui/common/job_reader.h, the Pairs tab's reader too), never on the GUI thread, so a
// job file locked by another process never freezes the window: the model shows the view it has
// until the new one arrives, and a row whose page is not read yet shows "…" in every cell until
// its page arrives (dataChanged). Reads of a superseded view (another job, filter or order) are
// dropped by generation numbers, and skipped when they have not started yet. While a job runs,
// refresh() asks the file whether anything was committed (one cheap PRAGMA) and, when rows only
// arrived, announces them as inserted rows so that the view keeps its selection and scroll
// position; anything else (a row that left the filter or moved in the sort) resets the model.
// The Valid column shows the validity the job stored with each row (JobTable's
// RowSummary::validity, over all samples), so it sorts and filters in SQL like the others. Rows
// stored before validity was kept have none: a page holding such rows has their whole outputs
// read and checked on a pool thread (PageValidityReader), its cells showing "…" until they
// arrive; that check is shown only, so those rows sort and filter as having no verdict.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
#include <QThreadPool>
#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "engine/jobs/job_table.h"

namespace sluice {
struct GenerationSpec;
}  // namespace sluice

namespace sluice::ui {

class JobReader;
class PageValidityReader;

class ResultsModel final : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column : int {
    IdColumn,
    StatusColumn,
    PromptColumn,
    OutputColumn,
    TokensColumn,  // "<prompt> in · <output> out", every sample's ("212 · 187"); sorts by the
                   // longest sample
    TimeColumn,    // total ms
    FinishReasonColumn,
    ValidColumn,  // ✓ / ✗ whether every sample is valid for the job's grammar or the row's
                  // schema; "" for free text and rows without samples; sorts ✗, ✓, then rows
                  // without a verdict
    NumColumns,
  };
  enum Role : int {
    RowIndexRole = Qt::UserRole + 1,  // qint64: the row's index in the job
    StatusRole,                       // QString: "done", "failed" or "skipped"
  };
  static constexpr int kPageRows = 200;
  static constexpr int kMaxCachedPages = 16;
  // What a cell shows while its row's page is being read.
  static QString placeholderText();

  explicit ResultsModel(QObject* parent = nullptr);
  ~ResultsModel() override;

  // Shows the job at jobPath (an empty path shows nothing; the path already shown is refreshed):
  // empties the view and reads the job on the reader; jobOpened follows, or errorOccurred when
  // the file cannot be read as a job (refresh() then tries again once the file exists).
  void setJobPath(const QString& jobPath);
  QString jobPath() const { return m_jobPath; }
  // True once the job shown has been read (its first view arrived).
  bool isJobOpen() const { return m_isJobOpen; }

  // Shows query's view: its filters and its order, in one reset when it arrives (sort() keeps
  // the selection when only the order changes).
  void setQuery(const sluice::JobTableQuery& query);
  // Filters: only rows with this status (nullopt: all), only rows whose prompt, output or error
  // contains text (ASCII case-insensitive). Each change reads the view again.
  void setStatusFilter(std::optional<sluice::RowStatus> status);
  void setSearchText(const QString& text);
  // Only rows of this validity (RowValidity over all samples; nullopt: all).
  void setValidityFilter(std::optional<sluice::RowValidity> validity);
  const sluice::JobTableQuery& query() const { return m_query; }

  // Brings the view up to date with the job file, on the reader: cheap when nothing was committed
  // since the last call; refreshed follows. A refresh asked while a read of the view is under way
  // runs after it.
  void refresh();

  // Returns the job row index shown at view row `row`, or -1 when out of range.
  qint64 rowIndexAt(int row) const;
  // Returns the view row showing job row rowIndex, or -1 when it is not in the view.
  int rowOf(qint64 rowIndex) const;
  // Reads the full stored result of job row rowIndex on the reader and calls done with it on the
  // GUI thread (nullopt when the row is not stored; errorOccurred when it cannot be read), unless
  // another job is shown meanwhile.
  void readRow(qint64 rowIndex, std::function<void(const std::optional<sluice::RowResult>&)> done);
  // True when view row `row`'s page has been read (its cells show the row, not "…").
  bool isRowRead(int row) const;
  // Whether the job constrains its outputs (a grammar or a schema per row); known once the job is
  // open.
  bool hasGrammar() const { return m_validityReader != nullptr; }
  // True while a page's validity is being checked on the pool.
  bool isCheckingValidity() const { return m_numValidityReads > 0; }
  // True while a read of the job (the view, a page, a row, a validity check) has not come back.
  bool isBusy() const;
  // Checks row's samples against the job's grammar on the validity pool and answers with
  // validityTextsRead: a sentence per sample saying whether it is valid ("valid JSON for the
  // schema", "not valid: cut off by max tokens"). Does nothing for a job of free text.
  void requestValidityTexts(const sluice::RowResult& row);

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  // Sorts by column; a new order of the same rows is a layout change, so the selection stays.
  void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

 signals:
  // A job file could not be read; message names the file and says why.
  void errorOccurred(const QString& message);
  // requestValidityTexts' answer for the job row rowIndex of the job shown.
  void validityTextsRead(qint64 rowIndex, const QStringList& texts);
  // The job set by setJobPath() was read: its first view is shown, hasGrammar() is known.
  void jobOpened();
  // A refresh() came back; hasChanged when the view changed (rows arrived, moved or were
  // replaced).
  void refreshed(bool hasChanged);

 private:
  struct Page {
    std::vector<sluice::RowSummary> rows;  // one per view row of the page; gaps are placeholders
    // Per row, checked on the pool for rows stored before validity was kept; empty until then.
    std::vector<std::optional<bool>> isValid;
    bool isValidityRead = false;  // true when the page needed no check
    std::list<int>::iterator lruPosition;
  };
  // What a read of the view brings back (ResultsModel.cpp's readView / readRefresh).
  struct ViewRead;
  struct PageRead;
  // The generations that pool tasks compare against before they start: a task of a superseded
  // view or page set skips its SQL.
  struct LiveGenerations {
    std::atomic<quint64> view{0};
    std::atomic<quint64> pages{0};
  };

  // Reads query's view (and, when isOpening, the job's spec) on the reader; a sort-only change
  // keeps the selection (applyView).
  void requestView(bool isOpening, bool isSortOnly);
  // Reads the view of a changed query: at once when the job is open, with the job when it is
  // being opened (an open under way was asked with the old query).
  void requestQueryView(bool isSortOnly);
  void applyView(const ViewRead& read, bool isSortOnly);
  // Applies a view of the same rows in a new order as a layout change.
  void applyNewOrder(std::vector<int64_t> fresh);
  void applyRefresh(const ViewRead& read);
  // Sets up the Valid column's reader for the job's spec (nullopt: free text or unreadable).
  void setSpec(const std::optional<sluice::GenerationSpec>& spec);
  // Replaces the view's row indices after a commit: inserted rows when every shown row kept its
  // place, a reset otherwise.
  void applyRefreshed(std::vector<int64_t> fresh);
  // Runs a refresh that was asked while the view was being read.
  void runWantedRefresh();
  // Returns the summary shown at view row `row`, or nullptr (asking the reader for its page) when
  // its page is not cached.
  const sluice::RowSummary* summaryAt(int row) const;
  void requestPage(int pageNumber) const;
  void onPageRead(const PageRead& read);
  void clearPages() const;
  // Checks the validity of a page's rows on the pool; onValidityRead() fills the page in.
  void requestValidity(int pageNumber, std::vector<int64_t> rowIndices) const;
  void onValidityRead(quint64 generation, int pageNumber, std::vector<std::optional<bool>> isValid,
                      const QString& error);
  void reportError(const QString& message) const;
  QVariant displayData(const sluice::RowSummary& row, int column) const;
  // The Valid cell of row, shown at view row viewRow (whose page is cached).
  QString validText(const sluice::RowSummary& row, int viewRow) const;

  QString m_jobPath;
  JobReader* m_reader = nullptr;  // a child; every read of the job goes through it
  bool m_isJobOpen = false;
  sluice::JobTableQuery m_query;
  int64_t m_dataVersion = -1;         // the job's data_version when m_rowIndices was read
  std::vector<int64_t> m_rowIndices;  // the view: job row index per view row
  // Changes with every request of a new view (job, filter, order): older view reads are dropped.
  quint64 m_viewGeneration = 0;
  bool m_isViewPending = false;    // a read of the view (or a refresh) has not come back
  bool m_isRefreshWanted = false;  // refresh() was called meanwhile
  std::shared_ptr<LiveGenerations> m_live = std::make_shared<LiveGenerations>();

  // A cache that data() fills, hence mutable.
  mutable std::unordered_map<int, Page> m_pages;
  mutable std::list<int> m_lru;          // page numbers, most recently used first
  mutable std::set<int> m_pendingPages;  // asked of the reader, not back yet
  mutable std::set<int> m_failedPages;   // their read failed: not asked again until a change
  // Changes with every clearPages(): a page (or its validity) read before it is dropped.
  mutable quint64 m_pageGeneration = 0;
  mutable int m_numValidityReads = 0;
  mutable int m_numRowReads = 0;
  quint64 m_jobGeneration = 0;  // changes with the job shown: a row's validity read before drops
  // Used by the validity pool's one thread only (nullptr for free text).
  std::shared_ptr<PageValidityReader> m_validityReader;
  // Last, so it is destroyed (waiting for its task) first: tasks call back into the model.
  mutable QThreadPool m_validityPool;
};

}  // namespace sluice::ui
