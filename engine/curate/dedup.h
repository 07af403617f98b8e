// Exact and near deduplication of texts (issue 35, item 3): which texts to remove, why, and the
// cluster each belongs to.
//
// Exact: texts equal once normalised (text_normalize.h) — a 64-bit hash of the normalised text,
// confirmed by comparing the bytes when two hashes are equal. Texts that normalise to "" (empty,
// or only whitespace and punctuation) are exact duplicates of the first of them.
// Near: MinHash signatures of word shingles (shingles.h, minhash.h) bucketed by LSH
// (lsh_index.h); every candidate pair is verified by the exact Jaccard similarity of the two
// shingle sets (not the signatures' estimate, so a kept pair is one whose real similarity is >=
// threshold, and the recall at the threshold is LSH's alone) and verified pairs are joined by
// union-find. Exact duplicates are folded first, so only one text of each exact group takes part.
//
// A cluster is a connected set of texts (exact groups and verified pairs); its lowest index is
// kept and every other member is removed, naming the kept one. A member joined through a chain
// (a ~ b ~ c with a and c below the threshold) is removed too, and its reason says so.
// Deterministic: signatures are computed in parallel, pairs are merged and joined in index
// order, so the verdicts are the same at any num_threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sluice {

struct DedupOptions {
  bool exact = true;       // normalised-text hash with a byte compare on hash equality
  bool near = true;        // MinHash + LSH, verified by the exact shingle Jaccard
  double threshold = 0.8;  // Jaccard of word-shingle sets, in (0, 1]
  int num_permutations = 128;
  int shingle_words = 5;  // texts shorter than this: one shingle of all their words
  uint64_t seed = 42;     // the permutations' seed
  int num_threads = 0;    // 0: hardware concurrency; results never depend on it
  // How a reason names the text at an index; empty: "row <index>". The pipeline names job rows
  // and samples with it ("row 17 sample 2").
  std::function<std::string(size_t index)> describe_text;
};

struct DedupVerdict {
  bool removed = false;
  std::string reason;         // "" when kept; "exact duplicate of row 17" /
                              // "near duplicate of row 17 (Jaccard 0.86)"
  int64_t cluster = -1;       // the cluster id = the index of the cluster's kept text; -1 alone
  int64_t duplicate_of = -1;  // the cluster's kept text (its index), -1 when kept
  double similarity = 0.0;    // with duplicate_of: 1 for exact, the exact shingle Jaccard for near
};

// Where the time went, for the benchmark (seconds).
struct DedupTimings {
  double exact_seconds = 0;      // normalising and hashing every text, grouping equal ones
  double signature_seconds = 0;  // shingles and signatures of one text per exact group
  double lsh_seconds = 0;        // bucketing the bands into candidate pairs
  double verify_seconds = 0;     // exact Jaccard of the candidates, union-find, verdicts
  double total_seconds = 0;
};

struct DedupResult {
  std::vector<DedupVerdict> verdicts;  // one per input text, same order
  size_t num_exact = 0, num_near = 0;  // texts removed as exact / near duplicates
  size_t num_clusters = 0;             // clusters with 2+ members
  // How the near pass ran: its bands and rows (lsh_index.h), the candidate pairs LSH proposed
  // and those whose exact Jaccard reached the threshold.
  int lsh_bands = 0, lsh_rows = 0;
  size_t num_candidate_pairs = 0, num_verified_pairs = 0;
  DedupTimings timings;
};

// Returns a verdict per text as described above. Throws Error for options out of range
// (threshold not in (0, 1], num_permutations not in [1, 1024], shingle_words < 1) or more than
// 2^32 - 1 texts.
DedupResult find_duplicates(const std::vector<std::string>& texts, const DedupOptions& options);

}  // namespace sluice
