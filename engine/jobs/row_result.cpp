#include "engine/jobs/row_result.h"

#include "engine/core/error.h"

namespace sluice {

const char* to_string(RowStatus status) {
  switch (status) {
    case RowStatus::Pending:
      return "pending";
    case RowStatus::Done:
      return "done";
    case RowStatus::Failed:
      return "failed";
    case RowStatus::Skipped:
      return "skipped";
  }
  return "?";
}

RowStatus parse_row_status(const std::string& name) {
  if (name == "pending") return RowStatus::Pending;
  if (name == "done") return RowStatus::Done;
  if (name == "failed") return RowStatus::Failed;
  if (name == "skipped") return RowStatus::Skipped;
  fail("unknown row status '", name, "' (pending, done, failed, skipped)");
}

RowValidity row_validity(const RowResult& row) {
  bool has_unjudged = row.samples.empty();
  for (const SampleResult& sample : row.samples) {
    if (sample.valid == false) return RowValidity::Invalid;
    has_unjudged |= !sample.valid.has_value();
  }
  return has_unjudged ? RowValidity::Unknown : RowValidity::Valid;
}

}  // namespace sluice
