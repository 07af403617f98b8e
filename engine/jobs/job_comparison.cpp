#include "engine/jobs/job_comparison.h"

#include <algorithm>
#include <cassert>

#include "engine/core/error.h"
#include "engine/jobs/job_table.h"

namespace sluice {

namespace {

// Rows read from each job per step of compare_jobs; between steps progress is reported.
constexpr size_t kRowsPerStep = 256;

int utf8_length(const std::string& text) {
  int n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

double mean_of(const std::vector<int>& values) {
  if (values.empty()) return 0.0;
  double sum = 0.0;
  for (const int v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double median_of(std::vector<int> values) {
  if (values.empty()) return 0.0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  // The lower middle value is the largest of the half before mid.
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2.0;
}

}  // namespace

std::vector<FinishReasonCounts> finish_reason_table(const JobComparisonStats& stats) {
  std::map<std::string, FinishReasonCounts> by_reason;
  for (const auto& [reason, count] : stats.a.finish_reason_counts) {
    by_reason[reason].finish_reason = reason;
    by_reason[reason].num_a = count;
  }
  for (const auto& [reason, count] : stats.b.finish_reason_counts) {
    by_reason[reason].finish_reason = reason;
    by_reason[reason].num_b = count;
  }
  std::vector<FinishReasonCounts> table;
  for (auto& [reason, counts] : by_reason) table.push_back(std::move(counts));
  return table;
}

void check_same_source(const JobInfo& a, const std::string& path_a, const JobInfo& b,
                       const std::string& path_b) {
  // Without digests (a job written elsewhere) the paths are all there is to go by.
  const bool is_same = a.source_sha256.empty() && b.source_sha256.empty()
                           ? a.source_path == b.source_path
                           : a.source_sha256 == b.source_sha256;
  if (is_same) return;
  fail("cannot compare ", path_a, " and ", path_b, ": they ran over different input files (",
       a.source_path, ", sha256 ", a.source_sha256.empty() ? "unknown" : a.source_sha256, "; ",
       b.source_path, ", sha256 ", b.source_sha256.empty() ? "unknown" : b.source_sha256,
       "), so their rows do not match");
}

bool rows_differ(const RowResult& a, const RowResult& b) {
  if (a.status != b.status || a.samples.size() != b.samples.size()) return true;
  for (size_t i = 0; i < a.samples.size(); ++i) {
    if (a.samples[i].output != b.samples[i].output) return true;
  }
  return false;
}

bool JobComparison::add(const RowResult* a, const RowResult* b) {
  assert((a != nullptr || b != nullptr) && "a row index stored in neither job is not added");
  if (a != nullptr) add_side(a_, *a);
  if (b != nullptr) add_side(b_, *b);
  if (a != nullptr && b != nullptr) {
    ++counts_.num_matched_rows;
    const bool differ = rows_differ(*a, *b);
    if (differ) ++counts_.num_differing_rows;
    return differ;
  }
  ++(a != nullptr ? counts_.num_only_in_a : counts_.num_only_in_b);
  return false;
}

void JobComparison::add_side(Side& side, const RowResult& row) {
  JobSideStats& stats = side.stats;
  ++stats.num_rows;
  if (row.status == RowStatus::Done) ++stats.num_done;
  if (row.status == RowStatus::Failed) ++stats.num_failed;
  if (row.status == RowStatus::Skipped) ++stats.num_skipped;
  for (const SampleResult& sample : row.samples) {
    ++stats.finish_reason_counts[sample.finish_reason.empty() ? "none" : sample.finish_reason];
    if (row.status != RowStatus::Done) continue;
    ++stats.num_measured_samples;
    side.token_lengths.push_back(sample.output_tokens);
    side.char_lengths.push_back(utf8_length(sample.output));
    if (sample.output_tokens == 0 && !sample.output.empty()) stats.is_length_in_chars = true;
  }
}

JobSideStats JobComparison::finish_side(const Side& side) {
  JobSideStats stats = side.stats;
  const std::vector<int>& lengths =
      stats.is_length_in_chars ? side.char_lengths : side.token_lengths;
  stats.mean_output_length = mean_of(lengths);
  stats.median_output_length = median_of(lengths);
  return stats;
}

JobComparisonStats JobComparison::stats() const {
  JobComparisonStats stats = counts_;
  stats.a = finish_side(a_);
  stats.b = finish_side(b_);
  return stats;
}

JobComparisonResult compare_jobs(const JobTable& a, const JobTable& b,
                                 const ComparisonProgress& progress) {
  check_same_source(a.info(), a.path(), b.info(), b.path());
  JobComparisonResult result;
  {
    const std::vector<int64_t> in_a = a.row_indices_from(0);
    const std::vector<int64_t> in_b = b.row_indices_from(0);
    result.row_indices.reserve(std::max(in_a.size(), in_b.size()));
    std::set_union(in_a.begin(), in_a.end(), in_b.begin(), in_b.end(),
                   std::back_inserter(result.row_indices));
  }
  JobComparison comparison;
  const auto total = static_cast<int64_t>(result.row_indices.size());
  for (size_t i = 0; i < result.row_indices.size(); ++i) {
    if (i % kRowsPerStep == 0 && progress && !progress(static_cast<int64_t>(i), total))
      throw Cancelled();
    const int64_t row_index = result.row_indices[i];
    const std::optional<RowResult> row_a = a.row(row_index);
    const std::optional<RowResult> row_b = b.row(row_index);
    if (!row_a && !row_b) continue;  // deleted between the two reads; nothing to compare
    if (comparison.add(row_a ? &*row_a : nullptr, row_b ? &*row_b : nullptr))
      result.differing_row_indices.push_back(row_index);
  }
  if (progress && !progress(total, total)) throw Cancelled();
  result.stats = comparison.stats();
  return result;
}

}  // namespace sluice
