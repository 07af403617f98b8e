// Read-only views of a job file for the results table: counts, pages and the ordered row indices
// of a filtered, sorted view. The table must scale to 100k+ rows while the job is still running,
// so nothing here loads every row: filters and sorts run as SQL over the job file, a page brings
// back short heads of the prompt and output, and the full RowResult is read for one row at a time.
//
// The table has its own connection. WAL lets it read while the job's writer (a JobStore in another
// thread or process) keeps committing; every call is one short read transaction whose statements
// are finished before it returns, so the writer's checkpoints are never held back for long. The
// connection is query_only and adds no index: a reader that wrote would contend for the writer's
// lock. Full scans are fast enough without one (see job_table_test.cpp for the timings).
//
// Not thread-safe: one thread owns a JobTable.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/jobs/job_info.h"
#include "engine/jobs/row_result.h"

namespace sluice {

class SqliteDb;

// What a view can be sorted by. Ties are broken by row index, in the same direction, so that a
// descending order is exactly the reverse of the ascending one.
enum class JobTableColumn : uint8_t {
  RowIndex,
  Id,      // the input's "id" field (numbers before text), rows without one first
  Status,  // by name: done, failed, skipped
  Prompt,  // by the prompt's first characters (byte order)
  Output,  // by sample 0's first characters (byte order), rows without samples first
  PromptTokens,
  OutputTokens,         // of sample 0
  LongestOutputTokens,  // the most of any sample, rows without samples first
  TotalMs,
  FinishReason,  // of sample 0
  Valid,         // the row's validity (row_validity): invalid, valid, then unknown
};

struct JobTableQuery {
  std::optional<RowStatus> status;      // only rows with this status
  std::optional<RowValidity> validity;  // only rows with this validity (row_validity)
  // Only rows whose prompt, error or any sample's output contains this text, ASCII letters
  // compared case-insensitively (other characters exactly). Empty matches every row.
  std::string search;
  JobTableColumn sort_column = JobTableColumn::RowIndex;
  bool is_descending = false;

  // True when the query leaves rows out (a status, a validity or a search).
  bool has_filters() const { return status || validity || !search.empty(); }
  bool operator==(const JobTableQuery&) const = default;
};

// One row as the table shows it: numbers and short heads, never the whole output.
struct RowSummary {
  int64_t row_index = 0;
  RowStatus status = RowStatus::Done;
  std::string id;           // the input's "id" field as text, or the row index when it has none
  std::string prompt_head;  // heads: the first kHeadChars characters, valid UTF-8, "…" when cut
  std::string output_head;  // sample 0's output; "" without samples
  std::string error_head;
  int prompt_tokens = 0;
  int output_tokens = 0;                  // of sample 0; 0 without samples
  std::vector<int> sample_output_tokens;  // every sample's, in order; empty without samples
  int num_samples = 0;
  double total_ms = 0.0;                        // NaN when the row has no timing
  std::string finish_reason;                    // of sample 0; "" without samples
  RowValidity validity = RowValidity::Unknown;  // over all samples (row_validity)

  bool operator==(const RowSummary&) const = default;
};

// The judge's scores of a job's done rows (SampleResult::extra's "score", as the judge step
// writes it and the dpo export's score rule ranks it), read without decoding whole rows.
struct JudgeScores {
  // By row index, each sample's score (nullopt: not judged, or not a number); only rows with at
  // least one scored sample.
  std::map<int64_t, std::vector<std::optional<double>>> by_row;
  std::string rubric;  // extra.judge.rubric of the first judged sample; "" when none says
};

class JobTable {
 public:
  // Characters (code points) kept in a RowSummary head.
  static constexpr size_t kHeadChars = 200;

  // Opens a job file for reading. Throws Error naming the file if it is missing, not a Sluice job
  // (or not SQLite at all), or of a newer schema version.
  static std::unique_ptr<JobTable> open(const std::string& path);

  ~JobTable();
  JobTable(const JobTable&) = delete;
  JobTable& operator=(const JobTable&) = delete;

  const std::string& path() const;
  // The job's info as read when the table was opened.
  const JobInfo& info() const { return info_; }

  // Returns the number of stored rows that match query's filters. With filters this reads the
  // whole view (see rows()), so a count then a page of the same query scan the job once.
  int64_t count(const JobTableQuery& query) const;
  // Returns up to limit rows of the view at offset (0-based), in query's order; fewer past the
  // end. A filtered or sorted view's row indices are kept (8 bytes a row) until the query or the
  // job changes, so paging through it scans the job once. Throws Error for a negative offset or
  // limit.
  std::vector<RowSummary> rows(const JobTableQuery& query, int64_t offset, int64_t limit) const;
  // Returns the row index of every row of the view, in query's order (8 bytes a row): a model
  // keeps this to page by position and to tell new rows from moved ones after a commit.
  std::vector<int64_t> row_indices(const JobTableQuery& query) const;
  // Returns every stored row index >= first_row_index, ascending, whatever a query would filter:
  // a range read of the primary key, so a model showing all rows in row order can pick up the
  // rows committed since its last look without reading the whole job again.
  std::vector<int64_t> row_indices_from(int64_t first_row_index) const;
  // Returns the summaries of the given rows in the given order; rows not stored are left out.
  std::vector<RowSummary> summaries(const std::vector<int64_t>& row_indices) const;
  // Returns the full stored result of row_index, or nullopt. Throws Error when it does not parse.
  std::optional<RowResult> row(int64_t row_index) const;
  // Returns the judge's scores of every done row (one scan, a few numbers a row). With
  // num_samples > 0 (the job's n) only samples 0..n-1 are read, by one json_extract a row (the
  // cost of reading the rows: ~2 s for 100k rows of 2 x 1.8 KB samples); 0 reads every sample
  // (json_each: ~3x slower).
  JudgeScores judge_scores(int num_samples = 0) const;

  // Returns a number that changes whenever another connection commits to the job file (PRAGMA
  // data_version): equal values mean every earlier answer is still current.
  int64_t data_version() const;

 private:
  // The row indices of one query's view at one data_version.
  struct View {
    JobTableQuery query;
    int64_t data_version = 0;
    std::vector<int64_t> row_indices;
  };

  JobTable(std::unique_ptr<SqliteDb> db, JobInfo info);

  // Returns query's view, read again when the query or the job changed since the last one.
  const View& view(const JobTableQuery& query) const;

  std::unique_ptr<SqliteDb> db_;
  JobInfo info_;
  mutable std::optional<View> view_;  // a cache: reads fill it, hence mutable
};

}  // namespace sluice
