// A job file holding hand-built rows, for the exporter tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/jobs/job_store.h"
#include "tests/support/test_paths.h"
#include "tests/unit/jobs/job_test_rows.h"

namespace sluice::test {

struct ExportJob {
  std::string dir;
  std::unique_ptr<JobStore> store;
};

// Creates <temp>/export-<name>/job.sluicejob with rows written and flushed; n samples per row.
inline ExportJob make_export_job(const std::string& name, const std::vector<RowResult>& rows, int n = 1) {
  ExportJob job;
  job.dir = make_temp_dir("export-" + name);
  job.store = JobStore::create(job.dir + "/job.sluicejob", make_job_info(n));
  for (const RowResult& row : rows) job.store->add_result(row);
  job.store->flush();
  return job;
}

}  // namespace sluice::test
