// Comparing two jobs made over the same input file (two models, or two settings): rows are matched
// by row index, and each job gets the numbers a researcher weighs them by (rows done and failed,
// output lengths, finish reasons), with how many matched rows came out differently.
//
// JobComparison is the pure part: it is fed pairs of RowResults and keeps only counts and one
// length per sample (8 bytes), so 100k-row jobs compare in little memory. compare_jobs() feeds it
// from two JobTables in row order; the CLI and the app (in a worker thread) both call that.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/jobs/job_info.h"
#include "engine/jobs/row_result.h"

namespace sluice {

class JobTable;

// One job's side of a comparison.
struct JobSideStats {
  int64_t num_rows = 0;  // stored rows
  int64_t num_done = 0;
  int64_t num_failed = 0;
  int64_t num_skipped = 0;
  int64_t num_measured_samples = 0;  // the samples of done rows, whose lengths are below
  // True when some measured sample has output but no token count (a job written elsewhere): the
  // lengths are then in characters (code points) for every sample of this job, not tokens.
  bool is_length_in_chars = false;
  double mean_output_length = 0.0;    // 0 without measured samples
  double median_output_length = 0.0;  // the mean of the middle two for an even count
  std::map<std::string, int64_t> finish_reason_counts;  // over every stored sample, failed rows too

  bool operator==(const JobSideStats&) const = default;
};

struct JobComparisonStats {
  JobSideStats a;
  JobSideStats b;
  int64_t num_matched_rows = 0;    // row indices stored in both jobs
  int64_t num_differing_rows = 0;  // matched rows that differ (see rows_differ)
  int64_t num_only_in_a = 0;       // row indices stored in a but not (yet) in b
  int64_t num_only_in_b = 0;

  bool operator==(const JobComparisonStats&) const = default;
};

// One finish reason's sample counts in each job.
struct FinishReasonCounts {
  std::string finish_reason;
  int64_t num_a = 0;
  int64_t num_b = 0;

  bool operator==(const FinishReasonCounts&) const = default;
};

// Returns every finish reason either job has, by name, with its count in each (0 where absent):
// the rows of a side-by-side table.
std::vector<FinishReasonCounts> finish_reason_table(const JobComparisonStats& stats);

// Throws Error naming both job files and both input files when a and b were made over different
// input files (their sha256 digests differ, or their paths where neither has a digest): their
// rows would not match by index.
void check_same_source(const JobInfo& a, const std::string& path_a, const JobInfo& b,
                       const std::string& path_b);

// Returns true when one row's two results differ: status, number of samples, or any sample's
// output text.
bool rows_differ(const RowResult& a, const RowResult& b);

// Accumulates a comparison one row index at a time.
class JobComparison {
 public:
  // Adds one row index's results; nullptr where that job has no stored row (not both null).
  // Returns true when both are given and they differ (rows_differ).
  bool add(const RowResult* a, const RowResult* b);
  // Returns the statistics of every row added so far.
  JobComparisonStats stats() const;

 private:
  struct Side {
    JobSideStats stats;
    std::vector<int> token_lengths;  // one per measured sample
    std::vector<int> char_lengths;
  };
  static void add_side(Side& side, const RowResult& row);
  static JobSideStats finish_side(const Side& side);

  Side a_;
  Side b_;
  JobComparisonStats counts_;  // the matching counts; a and b are filled by stats()
};

struct JobComparisonResult {
  JobComparisonStats stats;
  std::vector<int64_t> row_indices;            // stored in either job, ascending
  std::vector<int64_t> differing_row_indices;  // matched rows that differ, ascending
};

// Called while compare_jobs reads: rows read of the rows to read. Returns false to cancel.
using ComparisonProgress = std::function<bool(int64_t num_rows_read, int64_t num_rows_total)>;

// Reads both jobs' rows in row-index order and compares them. Throws Error from
// check_same_source for jobs over different inputs (before reading any row), Error naming the
// job file and row for a row that does not read back, and Cancelled when progress returns false.
JobComparisonResult compare_jobs(const JobTable& a, const JobTable& b,
                                 const ComparisonProgress& progress = {});

}  // namespace sluice
