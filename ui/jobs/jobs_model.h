// The Jobs view's model: one row per job file (newest first) with its model (a remote job's model
// as its servers named it), instruction file, what it was asked for (n, temperature, max tokens,
// structured-output mode: JobSettings), rows finished of the total, failed rows and state. The
// files are read off the GUI thread (listJobFiles, run by JobsView in a worker); the model only
// holds the listings. The job this window is running is shown with its live state and counts
// (setActiveJob) instead of what the file said when it was listed.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
#include <vector>

#include "engine/jobs/job_listing.h"
#include "ui/jobs/job_settings.h"

namespace sluice::ui {

class JobsModel final : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column : int {
    NameColumn,
    ModelColumn,
    InstructionsColumn,
    SamplesColumn,      // n
    TemperatureColumn,  // "0.9"
    MaxTokensColumn,
    OutputModeColumn,  // JobSettings::outputMode
    RowsColumn,        // "finished / total" ("finished / ?" while the total is unknown)
    FailedColumn,
    StateColumn,
    CreatedColumn,
    NumColumns,
  };
  enum Role : int {
    PathRole = Qt::UserRole + 1,  // QString: the job file
    StateRole,                    // int: JobState
  };
  // A job file knows how far it got, not why it stopped: one that is neither running here nor
  // complete shows as Cancelled (Resume runs its remaining rows); Failed is a file that cannot be
  // read, or a run that stopped on an error in this window.
  enum class JobState : int { Running, Paused, Done, Failed, Cancelled };

  // One job as listed: its file's listing and the settings its spec holds.
  struct Job {
    JobListing listing;
    JobSettings settings;
  };

  explicit JobsModel(QObject* parent = nullptr);

  // Returns the listings of every *.sluicejob in directory (a missing directory has none) and of
  // each of extraPaths that exists (jobs kept elsewhere, e.g. opened from another folder),
  // each file once, newest first. Reads every file: call it off the GUI thread.
  static std::vector<Job> listJobFiles(const QString& directory, const QStringList& extraPaths);
  static QString stateName(JobState state);

  // Replaces the rows.
  void setJobs(std::vector<Job> jobs);
  // Shows path (a job this window runs) with this state and counts; an empty path clears it.
  void setActiveJob(const QString& path, JobState state, const JobCounts& counts);
  QString activePath() const { return m_activePath; }
  JobCounts activeCounts() const { return m_activeCounts; }

  // Returns the row's file, or "" for an invalid index.
  QString pathAt(int row) const;
  // Returns the row showing path, or -1.
  int rowOf(const QString& path) const;
  JobState stateAt(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::vector<Job> m_jobs;
  QString m_activePath;
  int m_activeRow = -1;  // the row showing m_activePath, or -1
  JobState m_activeState = JobState::Running;
  JobCounts m_activeCounts;
};

}  // namespace sluice::ui
