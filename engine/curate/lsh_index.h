// Locality-sensitive hashing over MinHash signatures (minhash.h): a signature is cut into
// num_bands bands of rows_per_band slots; two texts whose signatures agree on every slot of some
// band share that band's bucket and become a candidate pair. A pair of Jaccard similarity s is a
// candidate with probability 1 - (1 - s^r)^b, an S-curve in s.
//
// Choosing b and r: every candidate is verified afterwards by its exact shingle Jaccard (dedup.h),
// so a false candidate costs one set comparison while a missed pair is lost for good. The usual
// choice (datasketch's: minimise the areas of false positives and negatives) leaves a pair at
// exactly the threshold with a 40% chance at 0.8 and 128 permutations; here r is the largest
// number of rows for which a pair at the threshold is still a candidate with probability >= 0.95,
// with b = floor(P / r) bands (b * r <= P; the few slots left over are unused). At 0.8 and 128
// that is r = 7, b = 18: a pair at 0.8 is found with p = 0.985, at 0.86 (3 words changed in 200)
// with p > 0.999, and unrelated texts (s near 0) practically never.
//
// Bounded buckets: a bucket's members, in index order m0 < m1 < ..., give the pairs (m0, mj) and
// (m(j-1), mj) — a star on the lowest and a chain — never all pairs, so one bucket of n texts
// costs 2n pairs, not n^2 / 2, and members that are near duplicates of one another are still
// connected through the verified edges (union-find joins components). Exact duplicates are
// folded before LSH, so 100k identical texts give one signature, not one giant bucket.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace sluice {

class ThreadPool;

struct LshBands {
  int num_bands = 1;
  int rows_per_band = 1;
};

// A candidate's probability at the threshold that choose_lsh_bands aims for.
inline constexpr double kLshRecallAtThreshold = 0.95;

// Returns the bands and rows for a Jaccard threshold in (0, 1] and num_permutations >= 1, as
// described above.
LshBands choose_lsh_bands(double threshold, int num_permutations);

// Returns the probability that a pair of Jaccard similarity s becomes a candidate.
double lsh_candidate_probability(const LshBands& bands, double jaccard);

// Returns the candidate pairs (i < j of ids' values, sorted, each once) among ids (ascending
// text indices) whose signatures are signatures [ids.size(), num_permutations] (row k is
// ids[k]'s). Bands are bucketed in parallel on pool, one band per task, and merged
// in band order: the result never depends on the thread count.
std::vector<std::pair<uint32_t, uint32_t>> lsh_candidate_pairs(std::span<const uint32_t> signatures,
                                                               int num_permutations,
                                                               std::span<const uint32_t> ids,
                                                               const LshBands& bands,
                                                               ThreadPool& pool);

}  // namespace sluice
