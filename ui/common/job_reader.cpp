#include "ui/common/job_reader.h"

#include "engine/jobs/job_table.h"
#include "engine/jobs/pair_pick_store.h"

namespace sluice::ui {

JobFiles::JobFiles() = default;
JobFiles::~JobFiles() = default;

sluice::JobTable& JobFiles::openTable() {
  if (!table) table = sluice::JobTable::open(path);
  return *table;
}

void JobFiles::open() {
  openTable();
  if (!picks) picks = sluice::PairPickStore::open(path);
}

void JobFiles::close() {
  table.reset();
  picks.reset();
}

JobReader::JobReader(QObject* parent) : QObject(parent) {
  m_pool.setMaxThreadCount(1);  // one at a time, in order: a write lands before the next read
  setJobPath({});
}

JobReader::~JobReader() {
  m_pool.waitForDone();
}

void JobReader::setJobPath(const QString& jobPath) {
  ++m_generation;
  m_jobPath = jobPath;
  m_files = std::make_shared<JobFiles>();
  m_files->path = jobPath.toStdString();
}

}  // namespace sluice::ui
