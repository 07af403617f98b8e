#include "engine/curate/dedup_clusters.h"

#include <algorithm>
#include <map>

#include "engine/core/error.h"

namespace sluice {

std::vector<ReportCluster> report_clusters(const DedupResult& result,
                                           const std::vector<std::string>& texts,
                                           std::span<const int64_t> row_numbers) {
  if (result.verdicts.size() != texts.size())
    fail("report_clusters: ", result.verdicts.size(), " verdicts for ", texts.size(), " texts");
  if (!row_numbers.empty() && row_numbers.size() != texts.size())
    fail("report_clusters: ", row_numbers.size(), " row numbers for ", texts.size(), " texts");
  const auto row_of = [&](size_t index) {
    return row_numbers.empty() ? static_cast<int64_t>(index) : row_numbers[index];
  };
  std::map<int64_t, ReportCluster> by_kept;  // keyed by the kept text's index
  for (size_t i = 0; i < texts.size(); ++i) {
    const DedupVerdict& verdict = result.verdicts[i];
    if (!verdict.removed) continue;
    const auto kept = static_cast<size_t>(verdict.duplicate_of);
    auto [it, is_new] = by_kept.try_emplace(verdict.duplicate_of);
    ReportCluster& cluster = it->second;
    if (is_new) {
      cluster.kept_row = row_of(kept);
      cluster.kind = "exact";
      cluster.similarity = 1.0;
      cluster.sample_text = texts[kept];
    }
    cluster.removed_rows.push_back(row_of(i));
    if (!verdict.reason.starts_with("exact duplicate of")) cluster.kind = "near";
    cluster.similarity = std::min(cluster.similarity, verdict.similarity);
  }
  std::vector<ReportCluster> clusters;
  clusters.reserve(by_kept.size());
  for (auto& [kept, cluster] : by_kept) clusters.push_back(std::move(cluster));
  std::stable_sort(clusters.begin(), clusters.end(), [](const auto& a, const auto& b) {
    return a.removed_rows.size() > b.removed_rows.size();
  });
  return clusters;
}

}  // namespace sluice
