// Compare two jobs over one instruction file (two models, or two settings): each job's rows done
// and failed, mean and median output length and finish reasons side by side, how many rows
// differ, and the rows themselves (JobCompareModel), all rows or only those that differ. The jobs
// are compared on the thread pool (compare_jobs, with its own JobTable connections) with progress;
// jobs over different files are refused with a message naming both.
#pragma once

#include <QDialog>
#include <QFutureWatcher>
#include <QString>
#include <optional>

#include "engine/jobs/job_comparison.h"
#include "engine/jobs/row_result.h"

class QCheckBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QSplitter;
class QTableView;
class QTableWidget;

namespace sluice::ui {

class JobCompareModel;

class JobCompareDialog final : public QDialog {
  Q_OBJECT

 public:
  // What the thread pool hands back: the comparison, or why there is none.
  struct Outcome {
    JobComparisonResult result;
    JobInfo infoA;
    JobInfo infoB;
    QString error;
  };
  // One row of both jobs in full, for the pane under the table.
  struct RowDetail {
    int64_t rowIndex = -1;
    std::optional<RowResult> a;
    std::optional<RowResult> b;
    QString error;
  };

  // Starts comparing the jobs at pathA and pathB at once.
  JobCompareDialog(const QString& pathA, const QString& pathB, QWidget* parent = nullptr);
  ~JobCompareDialog() override;

  JobCompareModel* model() const { return m_model; }
  QTableView* rowsTable() const { return m_rows; }
  QTableWidget* statsTable() const { return m_stats; }
  QCheckBox* onlyDifferingBox() const { return m_onlyDiffering; }
  // The comparison's statistics once compared().
  const JobComparisonStats& stats() const { return m_outcome.result.stats; }
  // The refusal or read error, "" when the comparison worked.
  QString errorText() const { return m_outcome.error; }
  // The full texts under the table: side 0 is A, 1 is B.
  QPlainTextEdit* detailText(int side) const { return m_detailTexts[side]; }

 signals:
  // The comparison has finished (or failed: errorText()).
  void compared();
  // The pane under the table shows rowIndex of both jobs in full.
  void detailShown(qint64 rowIndex);

 private:
  void onCompared();
  void showRows();
  void fillStats(const JobComparisonStats& stats);
  void describeJobs();
  void showDetail(int64_t rowIndex);
  void onDetailRead();

  QString m_pathA;
  QString m_pathB;
  QLabel* m_jobs = nullptr;
  QLabel* m_summary = nullptr;
  QLabel* m_error = nullptr;
  QSplitter* m_splitter = nullptr;
  QProgressBar* m_progress = nullptr;
  QTableWidget* m_stats = nullptr;
  QCheckBox* m_onlyDiffering = nullptr;
  QTableView* m_rows = nullptr;
  JobCompareModel* m_model = nullptr;
  QLabel* m_detailHeadings[2] = {};
  QPlainTextEdit* m_detailTexts[2] = {};
  QFutureWatcher<Outcome> m_watcher;
  Outcome m_outcome;
  QFutureWatcher<RowDetail> m_detailWatcher;
  int64_t m_detailRowIndex = -1;  // the row the pane should show
};

}  // namespace sluice::ui
