// The clusters of a deduplication (dedup.h) as the run report lists them (run_report.h): one
// ReportCluster per cluster of two or more texts, its kept text's row, its removed rows in
// order, "exact" when every removal is an exact duplicate and "near" otherwise, the lowest
// similarity of a removed member to the kept one, and the kept text as the sample. Largest
// first (most removed rows), ties by the kept row.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/curate/dedup.h"
#include "engine/curate/run_report.h"

namespace sluice {

// Returns the clusters of result, whose verdicts are those of texts. row_numbers names each
// text's row ([texts.size()]); empty: a text's index is its row.
std::vector<ReportCluster> report_clusters(const DedupResult& result,
                                           const std::vector<std::string>& texts,
                                           std::span<const int64_t> row_numbers = {});

}  // namespace sluice
