// The Pairs tab's reads and writes of one job file, off the GUI thread, through the JobReader the
// Results model uses too (ui/common/job_reader.h): they run one at a time, in the order asked, on
// a pool of one thread (so a pick written before J is stored before the next row is read), each
// through connections opened there; results come back to the GUI thread through queued calls.
// Results for a job shown before the last setJobPath() are dropped by a generation number.
#pragma once

#include <QObject>
#include <QString>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "engine/jobs/job_table.h"
#include "engine/jobs/pair_pick.h"
#include "engine/jobs/row_result.h"
#include "ui/common/job_reader.h"

namespace sluice {
class PairPickStore;
}  // namespace sluice

namespace sluice::ui {

class PairJobAccess final : public QObject {
  Q_OBJECT

 public:
  // The job's reviewable rows: its n, its done rows and the decisions stored for them.
  struct Rows {
    int numSamplesAsked = 0;  // 0 when the job does not say
    std::vector<int64_t> rowIndices;
    std::map<int64_t, PairPick> picks;  // picks, ties and unusable marks by row
    QString error;                      // names the job file; the rest is empty then
  };
  // One row and its pick.
  struct Row {
    std::optional<RowResult> row;
    std::optional<PairPick> pick;
    QString error;
  };

  explicit PairJobAccess(QObject* parent = nullptr);
  ~PairJobAccess() override;  // waits for the task that runs, if any

  // Reads and writes go to the job at jobPath from now on; earlier results are dropped.
  void setJobPath(const QString& jobPath);
  // Each calls done on the GUI thread with what it read, unless the job changed meanwhile.
  void readRows(std::function<void(const Rows&)> done);
  void readRow(int64_t rowIndex, std::function<void(const Row&)> done);
  // The judge's scores of every done row (JobTable::judge_scores with the job's n; none on an
  // error: the rows' own read reports it).
  void readScores(int numSamplesAsked, std::function<void(const JudgeScores&)> done);
  // Stores or clears a pick; failed is called with the error when the write fails.
  void setPick(const PairPick& pick, std::function<void(const QString& error)> failed);
  void clearPick(int64_t rowIndex, std::function<void(const QString& error)> failed);
  // True while a read or write has not come back yet.
  bool isBusy() const { return m_reader->isBusy(); }

 private:
  using Files = JobFiles;
  // Runs task on the pool with the job's files and hands its result to done on this thread.
  template <typename Result>
  void post(std::function<Result(Files&)> task, std::function<void(const Result&)> done) {
    m_reader->post<Result>(std::move(task), std::move(done));
  }

  // Runs change on the job's pick store on the pool; failed gets the error, if any.
  void write(std::function<void(sluice::PairPickStore&)> change,
             std::function<void(const QString& error)> failed);

  JobReader* m_reader = nullptr;  // a child: destroyed (waiting for its task) with this
};

}  // namespace sluice::ui
