#include "ui/pairs/pair_job_access.h"

#include <exception>

#include "engine/jobs/job_table.h"
#include "engine/jobs/pair_pick_store.h"

namespace sluice::ui {
namespace {

// The job's n (samples per prompt): params "n" (hand-built jobs, older files) or "sampling"."n"
// (what generate and the app store); 0 when the job does not say.
int samplesAsked(const JobInfo& info) {
  const auto nOf = [](const nlohmann::ordered_json& object) {
    if (!object.is_object()) return 0;
    const auto it = object.find("n");
    return it != object.end() && it->is_number_integer() ? it->get<int>() : 0;
  };
  if (const int n = nOf(info.params); n > 0) return n;
  const auto sampling = info.params.find("sampling");
  return sampling != info.params.end() ? nOf(*sampling) : 0;
}

}  // namespace

PairJobAccess::PairJobAccess(QObject* parent) : QObject(parent), m_reader(new JobReader(this)) {}

PairJobAccess::~PairJobAccess() = default;

void PairJobAccess::setJobPath(const QString& jobPath) {
  m_reader->setJobPath(jobPath);
}

void PairJobAccess::readRows(std::function<void(const Rows&)> done) {
  post<Rows>(
      [](Files& files) {
        Rows rows;
        try {
          files.open();
          rows.numSamplesAsked = samplesAsked(files.table->info());
          JobTableQuery query;
          query.status = RowStatus::Done;
          rows.rowIndices = files.table->row_indices(query);
          rows.picks = files.picks->picks();
        } catch (const std::exception& e) {
          rows = Rows{};
          rows.error = QString::fromStdString(e.what());
          files.close();  // opened again by the next task
        }
        return rows;
      },
      std::move(done));
}

void PairJobAccess::readRow(int64_t rowIndex, std::function<void(const Row&)> done) {
  post<Row>(
      [rowIndex](Files& files) {
        Row row;
        try {
          files.open();
          row.row = files.table->row(rowIndex);
          if (row.row) row.pick = files.picks->pick(rowIndex);
        } catch (const std::exception& e) {
          row = Row{};
          row.error = QString::fromStdString(e.what());
        }
        return row;
      },
      std::move(done));
}

void PairJobAccess::readScores(int numSamplesAsked, std::function<void(const JudgeScores&)> done) {
  post<JudgeScores>(
      [numSamplesAsked](Files& files) {
        try {
          files.open();
          return files.table->judge_scores(numSamplesAsked);
        } catch (const std::exception&) {
          return JudgeScores{};
        }
      },
      std::move(done));
}

void PairJobAccess::setPick(const PairPick& pick, std::function<void(const QString&)> failed) {
  write([pick](PairPickStore& picks) { picks.set(pick); }, std::move(failed));
}

void PairJobAccess::clearPick(int64_t rowIndex, std::function<void(const QString&)> failed) {
  write([rowIndex](PairPickStore& picks) { picks.clear(rowIndex); }, std::move(failed));
}

void PairJobAccess::write(std::function<void(PairPickStore&)> change,
                          std::function<void(const QString&)> failed) {
  post<QString>(
      [change = std::move(change)](Files& files) {
        try {
          files.open();
          change(*files.picks);
        } catch (const std::exception& e) {
          return QString::fromStdString(e.what());
        }
        return QString();
      },
      [failed = std::move(failed)](const QString& error) {
        if (!error.isEmpty() && failed) failed(error);
      });
}

}  // namespace sluice::ui
