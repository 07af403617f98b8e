// The results table's model: one job file's rows, filtered and sorted by JobTable, read a page at
// a time. It keeps only the ordered row indices of the view (8 bytes a row) and an LRU of a few
// pages of short summaries, so a job of 100k+ rows opens at once and never has its outputs in
// memory. While a job runs, refresh() asks the file whether anything was committed (one cheap
// PRAGMA) and, when rows only arrived, announces them as inserted rows so that the view keeps its
// selection and scroll position; anything else (a row that left the filter or moved in the sort)
// resets the model. The Valid column shows the validity the job stored with each row (JobTable's
// RowSummary::validity, over all samples), so it sorts and filters in SQL like the others. Rows
// stored before validity was kept have none: a page holding such rows has their whole outputs
// read and checked on a pool thread (PageValidityReader), its cells showing "…" until they
// arrive; that check is shown only, so those rows sort and filter as having no verdict.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
#include <QThreadPool>
#include <list>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/jobs/job_table.h"

namespace sluice::ui {

class PageValidityReader;

class ResultsModel final : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column : int {
    IdColumn,
    StatusColumn,
    PromptColumn,
    OutputColumn,
    TokensColumn,  // "<prompt> in · <output> out" (sample 0); sorts by output tokens
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

  explicit ResultsModel(QObject* parent = nullptr);
  ~ResultsModel() override;

  // Shows the job at jobPath (an empty path shows nothing; the path already shown is refreshed).
  // Returns false, emits errorOccurred and shows nothing when the file cannot be read as a job;
  // refresh() tries again once the file exists.
  bool setJobPath(const QString& jobPath);
  QString jobPath() const { return m_jobPath; }

  // Shows query's view: its filters and its order, in one reset (sort() keeps the selection
  // when only the order changes).
  void setQuery(const sluice::JobTableQuery& query);
  // Filters: only rows with this status (nullopt: all), only rows whose prompt, output or error
  // contains text (ASCII case-insensitive). Each change reloads the view.
  void setStatusFilter(std::optional<sluice::RowStatus> status);
  void setSearchText(const QString& text);
  // Only rows of this validity (RowValidity over all samples; nullopt: all).
  void setValidityFilter(std::optional<sluice::RowValidity> validity);
  const sluice::JobTableQuery& query() const { return m_query; }

  // Brings the view up to date with the job file. Cheap when nothing was committed since the last
  // call. Returns true when the view changed.
  bool refresh();

  // Returns the job row index shown at view row `row`, or -1 when out of range.
  qint64 rowIndexAt(int row) const;
  // Returns the view row showing job row rowIndex, or -1 when it is not in the view.
  int rowOf(qint64 rowIndex) const;
  // Returns the full stored result of job row rowIndex (emits errorOccurred when it cannot be
  // read).
  std::optional<sluice::RowResult> rowResult(qint64 rowIndex) const;
  // Whether the job constrains its outputs (a grammar or a schema per row).
  bool hasGrammar() const { return m_validityReader != nullptr; }
  // True while a page's validity is being checked on the pool.
  bool isCheckingValidity() const { return m_numValidityReads > 0; }
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

 private:
  struct Page {
    std::vector<sluice::RowSummary> rows;  // one per view row of the page; gaps are placeholders
    // Per row, checked on the pool for rows stored before validity was kept; empty until then.
    std::vector<std::optional<bool>> isValid;
    bool isValidityRead = false;  // true when the page needed no check
    std::list<int>::iterator lruPosition;
  };

  // Reads the view's row indices again and resets the model.
  void reload();
  // Returns the new view when it is all rows in row order, reading only the rows from the first
  // one that was missing; nullopt for any other view (the caller reads it whole).
  std::optional<std::vector<int64_t>> readGrownRowOrder() const;
  // Replaces the view's row indices after a commit: inserted rows when every shown row kept its
  // place, a reset otherwise.
  void applyRefreshed(std::vector<int64_t> fresh);
  // Returns the summary shown at view row `row`, reading its page when it is not cached.
  const sluice::RowSummary* summaryAt(int row) const;
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
  std::unique_ptr<sluice::JobTable> m_table;
  sluice::JobTableQuery m_query;
  int64_t m_dataVersion = -1;         // the job's data_version when m_rowIndices was read
  std::vector<int64_t> m_rowIndices;  // the view: job row index per view row

  // A cache that data() fills, hence mutable.
  mutable std::unordered_map<int, Page> m_pages;
  mutable std::list<int> m_lru;  // page numbers, most recently used first
  // Changes with every clearPages(): a page's validity read before it is dropped.
  mutable quint64 m_pageGeneration = 0;
  mutable int m_numValidityReads = 0;
  quint64 m_jobGeneration = 0;  // changes with the job shown: a row's validity read before drops
  // Used by the validity pool's one thread only (nullptr for free text).
  std::shared_ptr<PageValidityReader> m_validityReader;
  // Last, so it is destroyed (waiting for its task) first: tasks call back into the model.
  mutable QThreadPool m_validityPool;
};

}  // namespace sluice::ui
