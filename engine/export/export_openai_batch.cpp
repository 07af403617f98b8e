#include "engine/export/export_openai_batch.h"

#include <chrono>
#include <cstdio>

#include "engine/core/error.h"
#include "engine/core/sha256.h"
#include "engine/export/export_output.h"
#include "engine/export/export_rows.h"

namespace sluice {

namespace {

using Json = nlohmann::ordered_json;

// The error code of a row without a response: a line refused before it ran, or a run that failed.
const char* error_code_of(const RowResult& row) {
  return row.status == RowStatus::Skipped ? "invalid_request" : "generation_failed";
}

}  // namespace

std::string batch_request_id(const JobInfo& job_info, int64_t row_index) {
  return sha256_hex(str_cat(job_info.source_sha256, "|", job_info.created_at, "|", row_index))
      .substr(0, 32);
}

int64_t epoch_seconds_of(const std::string& text) {
  int year = 0;
  unsigned month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (std::sscanf(text.c_str(), "%d-%u-%uT%u:%u:%u", &year, &month, &day, &hour, &minute,
                  &second) != 6)
    return 0;
  const std::chrono::year_month_day date{std::chrono::year(year), std::chrono::month(month),
                                         std::chrono::day(day)};
  if (!date.ok() || hour > 23 || minute > 59 || second > 60) return 0;
  const auto days = std::chrono::sys_days(date).time_since_epoch();
  return std::chrono::duration_cast<std::chrono::seconds>(days).count() + hour * 3600 +
         minute * 60 + second;
}

ExportStats write_openai_batch_export(const JobStore& job, ExportOutput& out,
                                      const ExportOptions& options) {
  if (!options.batch_response_body) fail("the openai-batch export needs a response body builder");
  const int64_t created = epoch_seconds_of(job.info().created_at);
  ExportStats stats;
  for_each_readable_row(job, stats, [&](const RowResult& row) {
    if (is_left_out_as_invalid(row, options)) {
      stats.leave_out(kInvalidReason);
      return;
    }
    const std::string request_id = batch_request_id(job.info(), row.row_index);
    Json line;
    line["id"] = "batch_req_" + request_id;
    const auto custom_id = row.input.find("custom_id");
    line["custom_id"] =
        custom_id != row.input.end() && custom_id->is_string() ? *custom_id : Json(nullptr);
    if (row.status == RowStatus::Done) {
      // The body builder writes whatever reasoning the row it is given has: none under keep
      // and strip, which row_for_export has already moved or dropped.
      RowResult storage;
      const RowResult& exported = row_for_export(row, options.reasoning, storage);
      line["response"] = {
          {"status_code", 200},
          {"request_id", request_id},
          {"body", Json(options.batch_response_body(exported, request_id, created))}};
      line["error"] = nullptr;
    } else {
      line["response"] = nullptr;
      line["error"] = {{"code", error_code_of(row)}, {"message", row.error}};
    }
    out.write(line.dump(-1, ' ', false, Json::error_handler_t::replace));
    out.write("\n");
    stats.rows_written++;
    stats.records_written++;
  });
  return stats;
}

}  // namespace sluice
