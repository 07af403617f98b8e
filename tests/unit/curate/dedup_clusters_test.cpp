// Clusters for the run report (engine/curate/dedup_clusters.h) from hand-written verdicts:
// grouped by kept text, largest first, kind and lowest similarity, rows renamed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/curate/dedup_clusters.h"

namespace sluice {
namespace {

DedupVerdict removed_for(int64_t kept, const std::string& reason, double similarity) {
  DedupVerdict v;
  v.removed = true;
  v.reason = reason;
  v.cluster = kept;
  v.duplicate_of = kept;
  v.similarity = similarity;
  return v;
}

TEST(DedupClusters, GroupsRemovalsByTheirKeptTextLargestFirst) {
  const std::vector<std::string> texts = {"a", "b", "a!", "b~", "b.", "c"};
  DedupResult result;
  result.verdicts.resize(6);
  result.verdicts[0].cluster = 0;
  result.verdicts[1].cluster = 1;
  result.verdicts[2] = removed_for(0, "exact duplicate of row 0", 1.0);
  result.verdicts[3] = removed_for(1, "near duplicate of row 1 (Jaccard 0.90)", 0.9);
  result.verdicts[4] = removed_for(1, "exact duplicate of row 1", 1.0);
  const auto clusters = report_clusters(result, texts);
  ASSERT_EQ(clusters.size(), 2u);
  EXPECT_EQ(clusters[0].kept_row, 1);
  EXPECT_EQ(clusters[0].removed_rows, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(clusters[0].kind, "near");
  EXPECT_EQ(clusters[0].similarity, 0.9);
  EXPECT_EQ(clusters[0].sample_text, "b");
  EXPECT_EQ(clusters[1].kept_row, 0);
  EXPECT_EQ(clusters[1].kind, "exact");
  EXPECT_EQ(clusters[1].similarity, 1.0);

  const std::vector<int64_t> rows = {10, 11, 12, 13, 14, 15};
  const auto renamed = report_clusters(result, texts, rows);
  EXPECT_EQ(renamed[0].kept_row, 11);
  EXPECT_EQ(renamed[0].removed_rows, (std::vector<int64_t>{13, 14}));
  EXPECT_THROW(report_clusters(result, {"x"}), Error);
}

TEST(DedupClusters, FromARealDeduplication) {
  const std::vector<std::string> texts = {"one two three", "One, two three!", "four five six"};
  const auto clusters = report_clusters(find_duplicates(texts, {}), texts);
  ASSERT_EQ(clusters.size(), 1u);
  EXPECT_EQ(clusters[0].kept_row, 0);
  EXPECT_EQ(clusters[0].removed_rows, (std::vector<int64_t>{1}));
  EXPECT_EQ(clusters[0].kind, "exact");
}

}  // namespace
}  // namespace sluice
