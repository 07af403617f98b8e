// Reads (and the Pairs tab's few writes) of one job file off the GUI thread: tasks run one at a
// time, in the order posted, on a pool of one thread, each through the connections of JobFiles
// (opened there by the first task that needs them, kept for the next); each task's result comes
// back to the GUI thread through a queued call. Results for a job shown before the last
// setJobPath() are dropped by a generation number, so a slow read of a job no longer shown (one
// locked by another process waits out SQLite's busy timeout) never lands in the next one. Its
// users (the Results model, the Pairs tab's PairJobAccess) drop results of a superseded query of
// the same job with generation numbers of their own.
#pragma once

#include <QObject>
#include <QString>
#include <QThreadPool>
#include <functional>
#include <memory>
#include <string>

namespace sluice {
class JobTable;
class PairPickStore;
}  // namespace sluice

namespace sluice::ui {

// The connections to one job file. Touched only by the reader's pool thread.
struct JobFiles {
  std::string path;
  std::unique_ptr<sluice::JobTable> table;
  std::unique_ptr<sluice::PairPickStore> picks;

  JobFiles();
  ~JobFiles();
  // Opens the table (read only) when it is not open; throws Error naming the file.
  sluice::JobTable& openTable();
  // Opens the table and the pick store when they are not open; throws Error naming the file.
  void open();
  // Drops the connections after an error: the next task opens them again.
  void close();
};

class JobReader final : public QObject {
  Q_OBJECT

 public:
  explicit JobReader(QObject* parent = nullptr);
  ~JobReader() override;  // waits for the task that runs, if any

  // Tasks posted from now on go to the job at jobPath; results of earlier ones are dropped.
  void setJobPath(const QString& jobPath);
  QString jobPath() const { return m_jobPath; }
  // Runs task on the pool with the job's files and calls done on this object's thread with its
  // result, unless setJobPath() was called meanwhile.
  template <typename Result>
  void post(std::function<Result(JobFiles&)> task, std::function<void(const Result&)> done);
  // True while a posted task has not come back yet.
  bool isBusy() const { return m_numInFlight > 0; }

 private:
  std::shared_ptr<JobFiles> m_files;  // only the pool's tasks touch what it holds
  QString m_jobPath;
  quint64 m_generation = 0;
  int m_numInFlight = 0;
  QThreadPool m_pool;  // last: destroyed (waiting for its task) before the rest
};

template <typename Result>
void JobReader::post(std::function<Result(JobFiles&)> task,
                     std::function<void(const Result&)> done) {
  ++m_numInFlight;
  m_pool.start([this, files = m_files, generation = m_generation, task = std::move(task),
                done = std::move(done)] {
    Result result = task(*files);
    // The pool is a member that waits for this task, so `this` outlives the call.
    QMetaObject::invokeMethod(
        this,
        [this, generation, done, result = std::move(result)] {
          --m_numInFlight;
          if (generation == m_generation && done) done(result);
        },
        Qt::QueuedConnection);
  });
}

}  // namespace sluice::ui
