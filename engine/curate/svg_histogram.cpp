#include "engine/curate/svg_histogram.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

#include "engine/core/error.h"
#include "engine/curate/html_escape.h"

namespace sluice {

namespace {

constexpr double kChartWidth = 640, kChartHeight = 180, kMarginLeft = 48, kMarginBottom = 22,
                 kMarginTop = 8;

std::string format_value(double value, bool whole_numbers) {
  char text[48];
  if (whole_numbers) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else {
    std::snprintf(text, sizeof text, "%.3g", value);
  }
  return text;
}

std::string bin_range(const HistogramBin& bin, bool whole_numbers) {
  if (whole_numbers && bin.low == bin.high) return format_value(bin.low, true);
  return str_cat(format_value(bin.low, whole_numbers), "-", format_value(bin.high, whole_numbers));
}

}  // namespace

bool all_whole_numbers(std::span<const double> values) {
  return std::all_of(values.begin(), values.end(),
                     [](double v) { return std::isfinite(v) && v == std::floor(v); });
}

std::vector<HistogramBin> histogram_bins(std::span<const double> values, int max_bins) {
  assert(max_bins >= 1 && "a histogram has at least one bin");
  std::vector<HistogramBin> bins;
  std::vector<double> finite;
  for (const double v : values) {
    if (std::isfinite(v)) finite.push_back(v);
  }
  if (finite.empty()) return bins;
  const auto [min_it, max_it] = std::minmax_element(finite.begin(), finite.end());
  const double low = *min_it, high = *max_it;
  if (all_whole_numbers(finite)) {
    // Integer edges: width = ceil(span / max_bins), so [low, high] takes at most max_bins bins.
    const double span = high - low + 1;
    const double width = std::ceil(span / max_bins);
    const auto num_bins = static_cast<size_t>(std::ceil(span / width));
    for (size_t k = 0; k < num_bins; ++k) {
      const double bin_low = low + static_cast<double>(k) * width;
      bins.push_back({bin_low, std::min(high, bin_low + width - 1), 0});
    }
    for (const double v : finite)
      ++bins[std::min(static_cast<size_t>((v - low) / width), num_bins - 1)].count;
    return bins;
  }
  const size_t num_bins = high > low ? static_cast<size_t>(max_bins) : 1;
  const double width = (high - low) / static_cast<double>(num_bins);
  for (size_t k = 0; k < num_bins; ++k) {
    const double bin_low = low + static_cast<double>(k) * width;
    bins.push_back({bin_low, k + 1 == num_bins ? high : bin_low + width, 0});
  }
  for (const double v : finite) {
    const size_t k = width > 0 ? static_cast<size_t>((v - low) / width) : 0;
    ++bins[std::min(k, num_bins - 1)].count;
  }
  return bins;
}

std::string render_svg_histogram(const std::vector<HistogramBin>& bins, bool whole_numbers,
                                 std::string_view unit, std::string_view aria_label) {
  if (bins.empty()) return "<p class=\"empty\">No data.</p>\n";
  int64_t max_count = 0;
  for (const HistogramBin& bin : bins) max_count = std::max(max_count, bin.count);
  const double plot_width = kChartWidth - kMarginLeft - 4;
  const double plot_height = kChartHeight - kMarginBottom - kMarginTop;
  const double bar_width = plot_width / static_cast<double>(bins.size());
  const std::string unit_text = unit.empty() ? std::string() : str_cat(" ", html_escape(unit));
  std::string svg =
      str_cat("<svg class=\"histogram\" xmlns=\"http://www.w3.org/2000/svg\" width=\"", kChartWidth,
              "\" height=\"", kChartHeight, "\" viewBox=\"0 0 ", kChartWidth, " ", kChartHeight,
              "\" role=\"img\" aria-label=\"", html_escape(aria_label), "\">\n");
  svg += str_cat("<text class=\"axis\" x=\"", kMarginLeft - 6, "\" y=\"", kMarginTop + 10,
                 "\" text-anchor=\"end\">", max_count, "</text>\n");
  svg +=
      str_cat("<line class=\"axis\" x1=\"", kMarginLeft, "\" y1=\"", kMarginTop + plot_height,
              "\" x2=\"", kMarginLeft + plot_width, "\" y2=\"", kMarginTop + plot_height, "\"/>\n");
  char geometry[160];
  for (size_t k = 0; k < bins.size(); ++k) {
    const HistogramBin& bin = bins[k];
    const double height = max_count > 0 ? plot_height * static_cast<double>(bin.count) /
                                              static_cast<double>(max_count)
                                        : 0.0;
    std::snprintf(geometry, sizeof geometry, "x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"",
                  kMarginLeft + bar_width * static_cast<double>(k) + 0.5,
                  kMarginTop + plot_height - height, std::max(bar_width - 1.0, 0.5), height);
    const std::string range = bin_range(bin, whole_numbers);
    svg += str_cat("<rect class=\"bar\" ", geometry, " data-low=\"",
                   format_value(bin.low, whole_numbers), "\" data-high=\"",
                   format_value(bin.high, whole_numbers), "\" data-count=\"", bin.count,
                   "\"><title>", range, unit_text, ": ", bin.count, "</title></rect>\n");
  }
  svg += str_cat("<text class=\"axis\" x=\"", kMarginLeft, "\" y=\"", kChartHeight - 6, "\">",
                 format_value(bins.front().low, whole_numbers), "</text>\n");
  svg += str_cat("<text class=\"axis\" x=\"", kMarginLeft + plot_width, "\" y=\"", kChartHeight - 6,
                 "\" text-anchor=\"end\">", format_value(bins.back().high, whole_numbers),
                 unit_text, "</text>\n");
  svg += "</svg>\n";
  return svg;
}

}  // namespace sluice
