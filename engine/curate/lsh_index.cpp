#include "engine/curate/lsh_index.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "engine/core/thread_pool.h"
#include "engine/curate/text_normalize.h"

namespace sluice {

LshBands choose_lsh_bands(double threshold, int num_permutations) {
  assert(threshold > 0.0 && threshold <= 1.0 && num_permutations >= 1);
  LshBands best{num_permutations, 1};
  for (int rows = 2; rows <= num_permutations; ++rows) {
    const LshBands candidate{num_permutations / rows, rows};
    if (lsh_candidate_probability(candidate, threshold) < kLshRecallAtThreshold) break;
    best = candidate;
  }
  return best;
}

double lsh_candidate_probability(const LshBands& bands, double jaccard) {
  const double band_agrees = std::pow(jaccard, bands.rows_per_band);
  return 1.0 - std::pow(1.0 - band_agrees, bands.num_bands);
}

namespace {

struct BucketEntry {
  uint64_t key;
  uint32_t id;
  bool operator<(const BucketEntry& o) const { return key != o.key ? key < o.key : id < o.id; }
};

uint64_t pack_pair(uint32_t lower, uint32_t upper) {
  return (static_cast<uint64_t>(lower) << 32) | upper;
}

// The star-and-chain pairs of one band's buckets (see the header), packed as lower << 32 | upper.
std::vector<uint64_t> band_pairs(std::span<const uint32_t> signatures, int num_permutations,
                                 std::span<const uint32_t> ids, int band, int rows_per_band) {
  std::vector<BucketEntry> entries(ids.size());
  const auto width = static_cast<size_t>(num_permutations);
  const auto first_slot = static_cast<size_t>(band) * static_cast<size_t>(rows_per_band);
  for (size_t k = 0; k < ids.size(); ++k) {
    const uint32_t* slots = signatures.data() + k * width + first_slot;
    uint64_t key = 0x2545F4914F6CDD1DULL;
    for (int r = 0; r < rows_per_band; ++r) key = mix64(key ^ slots[r]) + static_cast<uint64_t>(r);
    entries[k] = {key, ids[k]};
  }
  std::sort(entries.begin(), entries.end());
  std::vector<uint64_t> pairs;
  for (size_t start = 0; start < entries.size();) {
    size_t end = start + 1;
    while (end < entries.size() && entries[end].key == entries[start].key) ++end;
    for (size_t j = start + 1; j < end; ++j) {
      pairs.push_back(pack_pair(entries[start].id, entries[j].id));
      if (j > start + 1) pairs.push_back(pack_pair(entries[j - 1].id, entries[j].id));
    }
    start = end;
  }
  return pairs;
}

}  // namespace

std::vector<std::pair<uint32_t, uint32_t>> lsh_candidate_pairs(std::span<const uint32_t> signatures,
                                                               int num_permutations,
                                                               std::span<const uint32_t> ids,
                                                               const LshBands& bands,
                                                               ThreadPool& pool) {
  assert(bands.num_bands * bands.rows_per_band <= num_permutations);
  std::vector<std::vector<uint64_t>> per_band(static_cast<size_t>(bands.num_bands));
  pool.parallel_for(bands.num_bands, [&](int64_t begin, int64_t end) {
    for (int64_t band = begin; band < end; ++band) {
      per_band[static_cast<size_t>(band)] = band_pairs(signatures, num_permutations, ids,
                                                       static_cast<int>(band), bands.rows_per_band);
    }
  });
  std::vector<uint64_t> packed;
  for (std::vector<uint64_t>& pairs : per_band) {
    packed.insert(packed.end(), pairs.begin(), pairs.end());
    pairs = {};
  }
  std::sort(packed.begin(), packed.end());
  packed.erase(std::unique(packed.begin(), packed.end()), packed.end());
  std::vector<std::pair<uint32_t, uint32_t>> result;
  result.reserve(packed.size());
  for (const uint64_t p : packed)
    result.emplace_back(static_cast<uint32_t>(p >> 32), static_cast<uint32_t>(p));
  return result;
}

}  // namespace sluice
