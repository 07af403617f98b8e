// The rows of two jobs over one input file side by side, matched by row index: prompt, output A,
// output B, finish reasons. Built for 100k-row jobs: the model holds the row indices to show
// (8 bytes a row, from compare_jobs) and reads the short heads (JobTable::summaries) a page at a
// time on the thread pool, each read with its own JobTable connections; a page not read yet shows
// "…" until it arrives. Pages from before the last setRows() are dropped by a generation number.
#pragma once

#include <QAbstractTableModel>
#include <QHash>
#include <QSet>
#include <QString>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/jobs/job_table.h"

namespace sluice::ui {

class JobCompareModel final : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    RowColumn,
    PromptColumn,
    OutputAColumn,
    OutputBColumn,
    FinishAColumn,
    FinishBColumn,
    NumColumns
  };
  static constexpr int kPageRows = 200;
  static constexpr int kMaxCachedPages = 32;  // about 6,400 rows of heads kept

  // One row's two summaries; a side is empty when that job has not stored the row.
  struct RowPair {
    std::optional<RowSummary> a;
    std::optional<RowSummary> b;
  };
  struct Page {
    std::vector<RowPair> rows;
    QString error;  // names the job file that could not be read
  };

  explicit JobCompareModel(QObject* parent = nullptr);

  // Shows rowIndices (ascending) of the jobs at pathA and pathB; differing (ascending) are the
  // row indices whose outputs differ, marked in the table. Pages are read when first shown.
  void setRows(const QString& pathA, const QString& pathB, std::vector<int64_t> rowIndices,
               std::vector<int64_t> differing);
  // Returns the row index shown at row, or -1.
  int64_t rowIndexAt(int row) const;
  // Returns true when every row of the page holding row has been read.
  bool isLoaded(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 signals:
  // A page has arrived (its rows' dataChanged was emitted).
  void pageLoaded(int page);
  // A page could not be read; message names the job file.
  void loadFailed(const QString& message);

 private:
  // Returns the cell's text with its line breaks (or "…" while its page is read).
  QVariant cellText(const QModelIndex& index) const;
  void requestPage(int page) const;
  void onPageRead(quint64 generation, int page, const Page& read);
  bool isDiffering(int64_t rowIndex) const;

  QString m_pathA;
  QString m_pathB;
  std::vector<int64_t> m_rowIndices;
  std::vector<int64_t> m_differing;
  quint64 m_generation = 0;
  // Pages read (a cache; data() fills it) and pages being read.
  mutable QHash<int, Page> m_pages;
  mutable QSet<int> m_pending;
};

}  // namespace sluice::ui
