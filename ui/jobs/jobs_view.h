// The Jobs tab: recent jobs (the "Sluice Jobs" folder and jobs opened from elsewhere) with their
// model, instruction file, n, temperature, max tokens, output mode, rows done, failed rows and
// state, and what can be done with one: open (show its rows and restore the setup panels), resume,
// export, delete (after a confirmation; never the job that is running), and with two selected,
// compare them (JobCompareDialog). The files are read in a worker thread; refresh() reads them
// again (after a run, when the tab is shown, or on the Refresh button).
#pragma once

#include <QFutureWatcher>
#include <QStringList>
#include <QWidget>
#include <vector>

#include "ui/jobs/jobs_model.h"

class QLabel;
class QPushButton;
class QTableView;

namespace sluice::ui {

class JobCompareDialog;

class JobsView final : public QWidget {
  Q_OBJECT

 public:
  explicit JobsView(QWidget* parent = nullptr);
  ~JobsView() override;

  // The folder listed, and jobs elsewhere to list too (the recent jobs).
  void setSources(const QString& directory, const QStringList& extraPaths);
  // Reads the job files again (in a worker thread); listed() follows.
  void refresh();
  // Shows the job this window runs with its live state and counts; "" when none runs.
  void setActiveJob(const QString& path, JobsModel::JobState state, const JobCounts& counts);
  // Deletes the job file (and its SQLite side files) after asking; refuses a running job.
  // Returns true when it was deleted.
  bool deleteJob(const QString& path);
  // Confirms a deletion; tests replace it.
  void setConfirmDelete(std::function<bool(const QString& path)> confirm) {
    m_confirmDelete = std::move(confirm);
  }

  JobsModel* model() const { return m_model; }
  QTableView* table() const { return m_table; }
  // The selected job when exactly one is selected, else "".
  QString selectedPath() const;
  // Every selected job, in table order.
  QStringList selectedPaths() const;
  // Opens a JobCompareDialog on the two jobs (it compares them in a worker thread); returns it.
  // It deletes itself when closed.
  JobCompareDialog* compareJobs(const QString& pathA, const QString& pathB);

 signals:
  void openRequested(const QString& path);
  void resumeRequested(const QString& path);
  void exportRequested(const QString& path);
  void listed();

 private:
  void onListed();
  void updateButtons();

  JobsModel* m_model = nullptr;
  QTableView* m_table = nullptr;
  QLabel* m_folderLabel = nullptr;
  QPushButton* m_open = nullptr;
  QPushButton* m_resume = nullptr;
  QPushButton* m_export = nullptr;
  QPushButton* m_delete = nullptr;
  QPushButton* m_compare = nullptr;
  QString m_directory;
  QStringList m_extraPaths;
  QFutureWatcher<std::vector<JobsModel::Job>> m_watcher;
  bool m_isRefreshWanted = false;  // refresh() while a listing runs: list again after it
  std::function<bool(const QString&)> m_confirmDelete;
};

}  // namespace sluice::ui
