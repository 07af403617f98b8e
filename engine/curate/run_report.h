// The run report (issue 35, item 4): what a reviewer asks before trusting a dataset, as ONE
// self-contained HTML file — inline CSS, inline SVG charts (svg_histogram.h), no script, no
// network — so it can be mailed, attached to a dataset card or opened offline. It shows the rows
// each step took in and gave out, model calls, tokens and time; histograms of output lengths
// (and of the chosen and rejected answers), of the judge's scores, the pairwise judge's
// position agreement; why rows were removed; the largest duplicate clusters; distinct-n
// diversity; and every parameter. Every string in it is escaped (html_escape.h): outputs are
// hostile. The pipeline fills a RunReport; this file only renders it.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace sluice {

struct ReportStep {
  std::string name, kind;   // "generate 1", "generate" / "judge" / "filter" / "dedup" / ...
  bool was_cached = false;  // its cache key had not changed: nothing ran
  int64_t rows_in = 0, rows_out = 0, model_calls = 0, prompt_tokens = 0, generated_tokens = 0;
  double seconds = 0;
};

struct ReportCluster {
  int64_t kept_row = 0;
  std::vector<int64_t> removed_rows;
  std::string kind;  // "exact" | "near"
  double similarity = 0;
  std::string sample_text;  // the kept row's text (shown cut to 300 characters)
};

struct RunReport {
  std::string title;
  nlohmann::ordered_json parameters;  // model, its SHA-256, files, every parameter: a table
  std::vector<ReportStep> steps;
  std::vector<int> output_tokens;                    // every generated sample's length
  std::vector<int> chosen_tokens, rejected_tokens;   // may be empty
  std::vector<double> judge_scores;                  // may be empty
  std::optional<double> position_agreement;          // pairwise judge: both orders agree, 0..1
  std::map<std::string, int64_t> removed_by_reason;  // "exact duplicate": 100, "refusal": 3, ...
  std::vector<ReportCluster> clusters;    // shown largest first (most removed rows), the first 50
  double distinct_1 = 0, distinct_2 = 0;  // over the kept outputs
  int64_t rows_exported = 0;
};

// The most clusters a report lists, and the characters of each one's sample shown.
inline constexpr size_t kReportMaxClusters = 50;
inline constexpr size_t kReportSampleChars = 300;

// Returns the report as a complete HTML document (UTF-8). Never divides by zero: an empty report
// renders with "No data." where there is nothing to draw.
std::string render_run_report_html(const RunReport& report);

}  // namespace sluice
