// The run report (engine/curate/run_report.h): the figures appear (steps, removed rows, the
// histogram bars' counts read from their titles and data attributes, agreement, diversity,
// clusters, parameters), every hostile string is escaped, an empty report renders, and the page
// is self-contained (no script, no external reference).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/curate/html_escape.h"
#include "engine/curate/run_report.h"
#include "engine/curate/svg_histogram.h"

namespace sluice {
namespace {

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

RunReport sample_report() {
  RunReport report;
  report.title = "DPO from prompts.jsonl";
  report.parameters = nlohmann::ordered_json::parse(
      R"({"model": "qwen3-0.6b.gguf", "model_sha256": "ab12", "sampling": {"temperature": 0.7,
          "n": 4}, "steps": ["generate", "judge"]})");
  report.steps = {{"generate", "generate", false, 100, 100, 400, 5000, 20000, 10.0},
                  {"judge", "judge", true, 100, 100, 0, 0, 0, 0.0}};
  report.output_tokens = {10, 10, 10, 12, 30};
  report.judge_scores = {1, 5, 5, 4};
  report.position_agreement = 0.875;
  report.removed_by_reason = {{"exact duplicate", 100}, {"refusal", 3}};
  report.clusters = {{7, {9}, "near", 0.86, "small cluster text"},
                     {2, {4, 5, 6}, "exact", 1.0, "big cluster text"}};
  report.distinct_1 = 0.4321;
  report.distinct_2 = 0.8766;
  report.rows_exported = 97;
  return report;
}

TEST(RunReport, ShowsTheFigures) {
  const std::string html = render_run_report_html(sample_report());
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(html.find("<title>DPO from prompts.jsonl</title>"), std::string::npos);
  // Steps: counts, the cached step, the generation rate 20000 / 10 s, and the totals row.
  EXPECT_NE(html.find("<td class=\"num\">400</td><td class=\"num\">5000</td>"
                      "<td class=\"num\">20000</td><td class=\"num\">10.0</td>"
                      "<td class=\"num\">2000.0</td>"),
            std::string::npos);
  // The cached step ran 0 s: no rate, and no division by zero.
  EXPECT_NE(html.find("class=\"cached\">cached</td><td class=\"num\">100</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">0.0</td><td class=\"num\">-</td>"), std::string::npos);
  EXPECT_EQ(html.find("nan"), std::string::npos);
  EXPECT_EQ(html.find("inf"), std::string::npos);
  EXPECT_NE(html.find("<td>exact duplicate</td><td class=\"num\">100</td>"), std::string::npos);
  EXPECT_NE(html.find("<div class=\"value\">103</div><div class=\"label\">rows removed"),
            std::string::npos);
  EXPECT_NE(html.find("<div class=\"value\">97</div>"), std::string::npos);
  // Output lengths 10..30: integer bins of width 1 (21 values fit in 24 bins).
  EXPECT_NE(html.find("data-count=\"3\"><title>10 tokens: 3</title>"), std::string::npos);
  EXPECT_NE(html.find("<title>12 tokens: 1</title>"), std::string::npos);
  EXPECT_NE(html.find("<title>30 tokens: 1</title>"), std::string::npos);
  // Judge scores 1..5: five bins, 5 twice.
  EXPECT_NE(html.find("<title>5: 2</title>"), std::string::npos);
  EXPECT_NE(html.find("<title>2: 0</title>"), std::string::npos);
  EXPECT_NE(html.find("87.5%"), std::string::npos);
  EXPECT_NE(html.find("0.432"), std::string::npos);
  EXPECT_NE(html.find("0.877"), std::string::npos);
  // Clusters, the largest first.
  const size_t big = html.find("big cluster text"), small = html.find("small cluster text");
  ASSERT_NE(big, std::string::npos);
  ASSERT_NE(small, std::string::npos);
  EXPECT_LT(big, small);
  EXPECT_NE(html.find("<td>4, 5, 6</td>"), std::string::npos);
  // Parameters, nested keys flattened.
  EXPECT_NE(html.find("<td>sampling.temperature</td><td>0.7</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>model_sha256</td><td>ab12</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>steps</td><td>[&quot;generate&quot;,&quot;judge&quot;]</td>"),
            std::string::npos);
}

TEST(RunReport, EscapesEveryHostileString) {
  RunReport report = sample_report();
  const std::string hostile = "<script>alert('x')</script>&\"";
  report.title = hostile;
  report.steps[0].name = hostile;
  report.removed_by_reason = {{hostile, 1}};
  report.clusters = {{0, {1}, hostile, 1.0, hostile + "\xFF\x01"}};
  report.parameters = {{hostile, hostile}};
  const std::string html = render_run_report_html(report);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("alert('x')"), std::string::npos);
  EXPECT_GE(occurrences(html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"), 6u);
  // The invalid byte and the control byte became U+FFFD: the page stays valid UTF-8.
  EXPECT_NE(html.find("&quot;\xEF\xBF\xBD\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(html.find('\xFF'), std::string::npos);
}

TEST(RunReport, AnEmptyReportRenders) {
  const std::string html = render_run_report_html(RunReport{});
  EXPECT_NE(html.find("<title>Sluice run report</title>"), std::string::npos);
  EXPECT_NE(html.find("No steps."), std::string::npos);
  EXPECT_NE(html.find("No data."), std::string::npos);
  EXPECT_EQ(html.find("nan"), std::string::npos);
  EXPECT_EQ(html.find("inf"), std::string::npos);
  EXPECT_EQ(html.find("id=\"judge\""), std::string::npos);
  EXPECT_TRUE(html.ends_with("</html>\n"));
}

TEST(RunReport, IsSelfContained) {
  const std::string html = render_run_report_html(sample_report());
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST(RunReport, ListsAtMostFiftyClusters) {
  RunReport report;
  for (int64_t i = 0; i < 60; ++i) report.clusters.push_back({i, {i + 100}, "exact", 1.0, "t"});
  const std::string html = render_run_report_html(report);
  EXPECT_EQ(occurrences(html, "<tr class=\"cluster\">"), kReportMaxClusters);
  EXPECT_NE(html.find("50 of 60 clusters"), std::string::npos);
}

TEST(SvgHistogram, BinsWholeNumbersOnIntegerEdgesAndOthersEvenly) {
  // 0..99 in at most 10 bins: width 10, [0-9] ... [90-99], ten values each.
  std::vector<double> values;
  for (int v = 0; v < 100; ++v) values.push_back(v);
  const auto bins = histogram_bins(values, 10);
  ASSERT_EQ(bins.size(), 10u);
  EXPECT_EQ(bins[0].low, 0);
  EXPECT_EQ(bins[0].high, 9);
  EXPECT_EQ(bins[9].low, 90);
  for (const HistogramBin& bin : bins) EXPECT_EQ(bin.count, 10);
  // Fractions over [1, 2] in 4 bins: 1.0 and 1.2 in the first, 2.0 in the last (closed).
  const auto fractions = histogram_bins(std::vector<double>{1.0, 1.2, 1.5, 2.0}, 4);
  ASSERT_EQ(fractions.size(), 4u);
  EXPECT_EQ(fractions[0].count, 2);
  EXPECT_EQ(fractions[2].count, 1);
  EXPECT_EQ(fractions[3].count, 1);
  EXPECT_EQ(histogram_bins(std::vector<double>{3.5, 3.5}, 4).size(), 1u);
  EXPECT_TRUE(histogram_bins(std::vector<double>{}, 4).empty());
}

TEST(HtmlEscape, TruncatesAtCharacterBoundaries) {
  EXPECT_EQ(truncate_utf8("h\xC3\xA9llo", 2), "h\xC3\xA9\xE2\x80\xA6");
  EXPECT_EQ(truncate_utf8("abc", 3), "abc");
  EXPECT_EQ(html_escape("a\xC3\xA9\xE2\x82"), "a\xC3\xA9\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(html_escape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
}

}  // namespace
}  // namespace sluice
