#include "engine/curate/run_report.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "engine/core/error.h"
#include "engine/curate/html_escape.h"
#include "engine/curate/svg_histogram.h"

namespace sluice {

namespace {

constexpr int kReportHistogramBins = 24;
constexpr size_t kReportRemovedRowsListed = 20;

constexpr const char* kReportStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:980px;
color:#1d2430;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d8dde6;
padding-bottom:4px}
table{border-collapse:collapse;width:100%;margin:6px 0}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #e6e9ef;vertical-align:top}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tr.total td{font-weight:600;border-top:2px solid #c4cad4}
.figures{display:flex;flex-wrap:wrap;gap:12px}
.figure{border:1px solid #e0e4ea;border-radius:6px;padding:8px 14px;min-width:130px}
.figure .value{font-size:20px;font-weight:600}.figure .label{color:#5a6474;font-size:12px}
svg.histogram rect.bar{fill:#4a7bd0}svg.histogram .axis{font-size:11px;fill:#5a6474;stroke:#9aa3b1}
.sample{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:12px;color:#333}
.empty{color:#7a8494;font-style:italic}.cached{color:#2e7d32}
)";

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string percent(double fraction) {
  return fixed(100.0 * fraction, 1) + "%";
}

std::string figure(std::string_view value, std::string_view label, std::string_view id) {
  return str_cat("<div class=\"figure\" id=\"", id, "\"><div class=\"value\">", html_escape(value),
                 "</div><div class=\"label\">", html_escape(label), "</div></div>\n");
}

std::string summary_section(const RunReport& report) {
  int64_t removed = 0;
  for (const auto& [reason, count] : report.removed_by_reason) removed += count;
  std::string html = "<section id=\"summary\"><div class=\"figures\">\n";
  html += figure(std::to_string(report.rows_exported), "rows exported", "rows-exported");
  html += figure(std::to_string(removed), "rows removed", "rows-removed");
  html += figure(fixed(report.distinct_1, 3), "distinct-1", "distinct-1");
  html += figure(fixed(report.distinct_2, 3), "distinct-2", "distinct-2");
  if (report.position_agreement)
    html += figure(percent(*report.position_agreement), "judge position agreement",
                   "position-agreement");
  return html + "</div></section>\n";
}

std::string steps_section(const std::vector<ReportStep>& steps) {
  std::string html = "<section id=\"steps\"><h2>Steps</h2>\n";
  if (steps.empty()) return html + "<p class=\"empty\">No steps.</p></section>\n";
  html +=
      "<table><tr><th>step</th><th>kind</th><th>ran</th><th class=\"num\">rows in</th>"
      "<th class=\"num\">rows out</th><th class=\"num\">model calls</th>"
      "<th class=\"num\">prompt tokens</th><th class=\"num\">generated tokens</th>"
      "<th class=\"num\">seconds</th><th class=\"num\">generated tok/s</th></tr>\n";
  ReportStep total;
  for (const ReportStep& s : steps) {
    const std::string rate =
        s.seconds > 0 ? fixed(static_cast<double>(s.generated_tokens) / s.seconds, 1) : "-";
    html += str_cat("<tr><td>", html_escape(s.name), "</td><td>", html_escape(s.kind), "</td><td",
                    s.was_cached ? " class=\"cached\">cached" : ">ran", "</td><td class=\"num\">",
                    s.rows_in, "</td><td class=\"num\">", s.rows_out, "</td><td class=\"num\">",
                    s.model_calls, "</td><td class=\"num\">", s.prompt_tokens,
                    "</td><td class=\"num\">", s.generated_tokens, "</td><td class=\"num\">",
                    fixed(s.seconds, 1), "</td><td class=\"num\">", rate, "</td></tr>\n");
    total.model_calls += s.model_calls;
    total.prompt_tokens += s.prompt_tokens;
    total.generated_tokens += s.generated_tokens;
    total.seconds += s.seconds;
  }
  html += str_cat(
      "<tr class=\"total\"><td>all steps</td><td></td><td></td><td></td><td></td>"
      "<td class=\"num\">",
      total.model_calls, "</td><td class=\"num\">", total.prompt_tokens, "</td><td class=\"num\">",
      total.generated_tokens, "</td><td class=\"num\">", fixed(total.seconds, 1),
      "</td><td></td></tr>\n");
  return html + "</table></section>\n";
}

std::string removed_section(const std::map<std::string, int64_t>& removed_by_reason) {
  std::string html = "<section id=\"removed\"><h2>Rows removed</h2>\n";
  if (removed_by_reason.empty()) return html + "<p class=\"empty\">None.</p></section>\n";
  html += "<table><tr><th>reason</th><th class=\"num\">rows</th></tr>\n";
  for (const auto& [reason, count] : removed_by_reason)
    html +=
        str_cat("<tr><td>", html_escape(reason), "</td><td class=\"num\">", count, "</td></tr>\n");
  return html + "</table></section>\n";
}

// Count, mean, median and maximum of a length distribution, then its histogram.
std::string distribution(std::string_view heading, std::string_view unit,
                         const std::vector<double>& values, std::string_view id) {
  std::string html =
      str_cat("<div class=\"distribution\" id=\"", id, "\"><h3>", html_escape(heading), "</h3>\n");
  if (!values.empty()) {
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const double mean =
        std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
    html += str_cat("<p>", sorted.size(), " values; mean ", fixed(mean, 2), ", median ",
                    fixed(sorted[sorted.size() / 2], 2), ", min ", fixed(sorted.front(), 2),
                    ", max ", fixed(sorted.back(), 2), "</p>\n");
  }
  html += render_svg_histogram(histogram_bins(values, kReportHistogramBins),
                               all_whole_numbers(values), unit, heading);
  return html + "</div>\n";
}

std::vector<double> as_doubles(const std::vector<int>& values) {
  return {values.begin(), values.end()};
}

std::string lengths_section(const RunReport& report) {
  std::string html = "<section id=\"lengths\"><h2>Output lengths</h2>\n";
  html += distribution("Generated samples", "tokens", as_doubles(report.output_tokens),
                       "output-tokens");
  if (!report.chosen_tokens.empty() || !report.rejected_tokens.empty()) {
    html +=
        distribution("Chosen answers", "tokens", as_doubles(report.chosen_tokens), "chosen-tokens");
    html += distribution("Rejected answers", "tokens", as_doubles(report.rejected_tokens),
                         "rejected-tokens");
  }
  return html + "</section>\n";
}

std::string judge_section(const RunReport& report) {
  if (report.judge_scores.empty() && !report.position_agreement) return "";
  std::string html = "<section id=\"judge\"><h2>Judge</h2>\n";
  if (report.position_agreement)
    html += str_cat("<p>Pairwise judgements that agree when A and B are swapped: ",
                    percent(*report.position_agreement), "</p>\n");
  html += distribution("Scores", "", report.judge_scores, "judge-scores");
  return html + "</section>\n";
}

std::string rows_list(const std::vector<int64_t>& rows) {
  std::string text;
  for (size_t i = 0; i < rows.size() && i < kReportRemovedRowsListed; ++i)
    text += (i ? ", " : "") + std::to_string(rows[i]);
  if (rows.size() > kReportRemovedRowsListed)
    text += str_cat(" and ", rows.size() - kReportRemovedRowsListed, " more");
  return text;
}

std::string clusters_section(const std::vector<ReportCluster>& clusters) {
  std::string html = "<section id=\"clusters\"><h2>Duplicate clusters</h2>\n";
  if (clusters.empty()) return html + "<p class=\"empty\">None.</p></section>\n";
  std::vector<const ReportCluster*> largest;
  for (const ReportCluster& c : clusters) largest.push_back(&c);
  std::stable_sort(largest.begin(), largest.end(), [](const auto* a, const auto* b) {
    return a->removed_rows.size() > b->removed_rows.size();
  });
  const size_t shown = std::min(largest.size(), kReportMaxClusters);
  html += str_cat("<p>", shown, " of ", clusters.size(), " clusters, the largest first.</p>\n");
  html +=
      "<table><tr><th class=\"num\">kept row</th><th>kind</th><th class=\"num\">similarity</th>"
      "<th class=\"num\">removed</th><th>removed rows</th><th>kept text</th></tr>\n";
  for (size_t i = 0; i < shown; ++i) {
    const ReportCluster& c = *largest[i];
    html += str_cat("<tr class=\"cluster\"><td class=\"num\">", c.kept_row, "</td><td>",
                    html_escape(c.kind), "</td><td class=\"num\">", fixed(c.similarity, 2),
                    "</td><td class=\"num\">", c.removed_rows.size(), "</td><td>",
                    rows_list(c.removed_rows), "</td><td class=\"sample\">",
                    html_escape(truncate_utf8(c.sample_text, kReportSampleChars)), "</td></tr>\n");
  }
  return html + "</table></section>\n";
}

// Parameters as rows of "key: value", nested objects flattened to dotted keys.
void parameter_rows(const nlohmann::ordered_json& value, const std::string& key,
                    std::string& html) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [name, child] : value.items())
      parameter_rows(child, key.empty() ? name : key + "." + name, html);
    return;
  }
  const std::string text =
      value.is_string() ? value.get<std::string>()
                        : value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  html += str_cat("<tr><td>", html_escape(key), "</td><td>", html_escape(text), "</td></tr>\n");
}

std::string parameters_section(const nlohmann::ordered_json& parameters) {
  std::string html = "<section id=\"parameters\"><h2>Model and parameters</h2>\n";
  if (parameters.is_null() || (parameters.is_object() && parameters.empty()))
    return html + "<p class=\"empty\">None recorded.</p></section>\n";
  html += "<table><tr><th>parameter</th><th>value</th></tr>\n";
  parameter_rows(parameters, parameters.is_object() ? "" : "value", html);
  return html + "</table></section>\n";
}

}  // namespace

std::string render_run_report_html(const RunReport& report) {
  const std::string title = html_escape(report.title.empty() ? "Sluice run report" : report.title);
  std::string html = str_cat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
      title, "</title>\n<style>", kReportStyle, "</style>\n</head>\n<body>\n<h1>", title,
      "</h1>\n");
  html += summary_section(report);
  html += steps_section(report.steps);
  html += removed_section(report.removed_by_reason);
  html += lengths_section(report);
  html += judge_section(report);
  html += clusters_section(report.clusters);
  html += parameters_section(report.parameters);
  return html + "</body>\n</html>\n";
}

}  // namespace sluice
