// Histograms as inline SVG for the run report: values binned into at most max_bins bins of equal
// width, each bar a <rect> that carries its range and count as data attributes and a <title>
// ("120-139 tokens: 42") that a browser shows on hover and a test can read. No script, no
// external file. Integer-valued data (token counts, 1-5 ratings) gets bins with integer edges, so
// no bar straddles two values.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

struct HistogramBin {
  double low = 0, high = 0;  // inclusive for integer data; [low, high) otherwise, the last closed
  int64_t count = 0;
};

// Returns the bins of values (none for no values). Precondition: max_bins >= 1.
std::vector<HistogramBin> histogram_bins(std::span<const double> values, int max_bins);

// True when every value is a whole number (then bins have integer edges).
bool all_whole_numbers(std::span<const double> values);

// Returns an <svg> element drawing bins, the bars titled "<range> <unit>: <count>" and labelled
// by aria_label (escaped here). An empty bins gives a short "no data" <p> instead.
std::string render_svg_histogram(const std::vector<HistogramBin>& bins, bool whole_numbers,
                                 std::string_view unit, std::string_view aria_label);

}  // namespace sluice
