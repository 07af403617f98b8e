#include "engine/curate/dedup.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "engine/core/error.h"
#include "engine/core/thread_pool.h"
#include "engine/curate/lsh_index.h"
#include "engine/curate/minhash.h"
#include "engine/curate/shingles.h"
#include "engine/curate/text_normalize.h"
#include "engine/curate/union_find.h"

namespace sluice {

namespace {

constexpr int kMaxPermutations = 1024;

using DedupClock = std::chrono::steady_clock;

double seconds_since(DedupClock::time_point start) {
  return std::chrono::duration<double>(DedupClock::now() - start).count();
}

// Runs fn(begin, end) over [0, n) in blocks of block_size that the pool's threads claim one at a
// time: a thread that gets no core (a busy machine) holds up at most one block, where
// ThreadPool's one chunk per thread would leave the others waiting for its whole share. Each
// element's result depends only on the element, so the blocking never shows in the output.
void for_each_dedup_block(ThreadPool& pool, size_t n, size_t block_size,
                          const std::function<void(size_t, size_t)>& fn) {
  std::atomic<size_t> next_block{0};
  pool.parallel_for(pool.num_threads(), [&](int64_t, int64_t) {
    for (;;) {
      const size_t begin = next_block.fetch_add(block_size);
      if (begin >= n) return;
      fn(begin, std::min(n, begin + block_size));
    }
  });
}

void check_dedup_options(const DedupOptions& options, size_t num_texts) {
  if (!(options.threshold > 0.0 && options.threshold <= 1.0))
    fail("dedup: threshold ", options.threshold, " is not in (0, 1]");
  if (options.num_permutations < 1 || options.num_permutations > kMaxPermutations)
    fail("dedup: num_permutations ", options.num_permutations, " is not in [1, ", kMaxPermutations,
         "]");
  if (options.shingle_words < 1)
    fail("dedup: shingle_words ", options.shingle_words, " must be at least 1");
  if (num_texts >= std::numeric_limits<uint32_t>::max())
    fail("dedup: ", num_texts, " texts, over the limit of ", std::numeric_limits<uint32_t>::max());
}

// Each text's exact group: the lowest index whose normalised text equals its own.
struct ExactGroups {
  std::vector<uint32_t> first;    // [num_texts]; first[i] == i for the first of a group
  std::vector<uint8_t> is_empty;  // [num_texts]; the text normalises to ""
};

ExactGroups group_exact(const std::vector<std::string>& texts, bool fold_empty, ThreadPool& pool) {
  const size_t n = texts.size();
  ExactGroups groups{std::vector<uint32_t>(n), std::vector<uint8_t>(n)};
  std::vector<uint64_t> hashes(n);
  for_each_dedup_block(pool, n, 256, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const std::string normalized = normalize_for_dedup(texts[i]);
      hashes[i] = hash_bytes(normalized);
      groups.is_empty[i] = normalized.empty() ? 1 : 0;
    }
  });
  // In index order, so the first of a group is its lowest index. Bytes are compared only on
  // equal hashes; the normalised text of a group's first is kept once it has been needed.
  std::unordered_multimap<uint64_t, uint32_t> first_by_hash;
  std::unordered_map<uint32_t, std::string> normalized_firsts;
  first_by_hash.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    groups.first[i] = i;
    if (groups.is_empty[i] && !fold_empty) continue;
    const auto [begin, end] = first_by_hash.equal_range(hashes[i]);
    if (begin != end) {
      const std::string normalized = normalize_for_dedup(texts[i]);
      for (auto it = begin; it != end; ++it) {
        auto cached = normalized_firsts.find(it->second);
        if (cached == normalized_firsts.end())
          cached =
              normalized_firsts.emplace(it->second, normalize_for_dedup(texts[it->second])).first;
        if (cached->second == normalized) {
          groups.first[i] = it->second;
          break;
        }
      }
    }
    if (groups.first[i] == i) first_by_hash.emplace(hashes[i], i);
  }
  return groups;
}

// The near pass's data: the texts that take part (one per exact group, with words), their
// signatures, and the shingle sets of those that ended up in a candidate pair.
struct NearPass {
  std::vector<uint32_t> ids;     // ascending
  std::vector<int32_t> slot_of;  // [num_texts]: index into shingle_sets, or -1
  std::vector<std::vector<uint64_t>> shingle_sets;
  std::vector<std::pair<uint32_t, uint32_t>> verified;  // pairs with Jaccard >= threshold

  double jaccard(uint32_t a, uint32_t b) const {
    return jaccard_of_sorted(shingle_sets[static_cast<size_t>(slot_of[a])],
                             shingle_sets[static_cast<size_t>(slot_of[b])]);
  }
};

void sign_texts(const std::vector<std::string>& texts, const DedupOptions& options,
                const std::vector<uint32_t>& ids, std::vector<uint32_t>& signatures,
                ThreadPool& pool) {
  const MinHasher hasher(options.num_permutations, options.seed);
  const auto width = static_cast<size_t>(options.num_permutations);
  signatures.assign(ids.size() * width, 0);
  for_each_dedup_block(pool, ids.size(), 64, [&](size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) {
      const std::vector<uint64_t> shingles =
          shingle_hashes_of_text(texts[ids[k]], options.shingle_words);
      hasher.sign(shingles, std::span<uint32_t>(signatures.data() + k * width, width));
    }
  });
}

// Verifies the candidates by their exact shingle Jaccard: the shingle sets of every text in a
// candidate pair are computed once, in parallel, and so are the pairs' similarities.
void verify_candidates(const std::vector<std::string>& texts, const DedupOptions& options,
                       const std::vector<std::pair<uint32_t, uint32_t>>& candidates, NearPass& near,
                       ThreadPool& pool) {
  std::vector<uint32_t> involved;
  for (const auto& [a, b] : candidates) {
    for (const uint32_t id : {a, b}) {
      if (near.slot_of[id] >= 0) continue;
      near.slot_of[id] = static_cast<int32_t>(involved.size());
      involved.push_back(id);
    }
  }
  near.shingle_sets.resize(involved.size());
  for_each_dedup_block(pool, involved.size(), 64, [&](size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k)
      near.shingle_sets[k] = shingle_hashes_of_text(texts[involved[k]], options.shingle_words);
  });
  std::vector<uint8_t> passes(candidates.size());
  for_each_dedup_block(pool, candidates.size(), 256, [&](size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) {
      const auto& [a, b] = candidates[k];
      passes[k] = near.jaccard(a, b) >= options.threshold ? 1 : 0;
    }
  });
  for (size_t k = 0; k < candidates.size(); ++k) {
    if (passes[k]) near.verified.push_back(candidates[k]);
  }
}

std::string format_jaccard(double jaccard) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", jaccard);
  return text;
}

}  // namespace

DedupResult find_duplicates(const std::vector<std::string>& texts, const DedupOptions& options) {
  const auto start = DedupClock::now();
  check_dedup_options(options, texts.size());
  const size_t n = texts.size();
  DedupResult result;
  result.verdicts.resize(n);
  if (!options.exact && !options.near) return result;
  ThreadPool pool(options.num_threads);

  // Exact groups are folded even for a near-only pass (they are near duplicates at Jaccard 1),
  // so that LSH sees each text once; texts without words have no shingles, so a near-only pass
  // leaves them alone.
  auto phase_start = DedupClock::now();
  const ExactGroups exact = group_exact(texts, options.exact, pool);
  result.timings.exact_seconds = seconds_since(phase_start);

  NearPass near;
  if (options.near) {
    for (uint32_t i = 0; i < n; ++i) {
      if (exact.first[i] == i && !exact.is_empty[i]) near.ids.push_back(i);
    }
    phase_start = DedupClock::now();
    std::vector<uint32_t> signatures;
    sign_texts(texts, options, near.ids, signatures, pool);
    result.timings.signature_seconds = seconds_since(phase_start);

    phase_start = DedupClock::now();
    const LshBands bands = choose_lsh_bands(options.threshold, options.num_permutations);
    result.lsh_bands = bands.num_bands;
    result.lsh_rows = bands.rows_per_band;
    const auto candidates =
        lsh_candidate_pairs(signatures, options.num_permutations, near.ids, bands, pool);
    result.num_candidate_pairs = candidates.size();
    signatures = {};
    result.timings.lsh_seconds = seconds_since(phase_start);

    phase_start = DedupClock::now();
    near.slot_of.assign(n, -1);
    verify_candidates(texts, options, candidates, near, pool);
    result.num_verified_pairs = near.verified.size();
  } else {
    phase_start = DedupClock::now();
  }

  UnionFind clusters(n);
  for (uint32_t i = 0; i < n; ++i) clusters.unite(exact.first[i], i);
  for (const auto& [a, b] : near.verified) clusters.unite(a, b);
  std::vector<uint32_t> cluster_size(n, 0);
  for (uint32_t i = 0; i < n; ++i) ++cluster_size[clusters.find(i)];

  const auto name = [&options](size_t index) {
    return options.describe_text ? options.describe_text(index) : str_cat("row ", index);
  };
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t root = clusters.find(i);
    DedupVerdict& verdict = result.verdicts[i];
    if (cluster_size[root] >= 2) verdict.cluster = root;
    if (root == i) {
      if (cluster_size[root] >= 2) ++result.num_clusters;
      continue;
    }
    verdict.removed = true;
    verdict.duplicate_of = root;
    const uint32_t first = exact.first[i];
    // A text whose exact group is not the kept one reaches it through a near pair.
    verdict.similarity = first == root ? 1.0 : near.jaccard(first, root);
    const std::string jaccard = format_jaccard(verdict.similarity);
    const std::string through =
        verdict.similarity < options.threshold ? ", through a chain of near duplicates" : "";
    if (first != i && options.exact) {
      ++result.num_exact;
      verdict.reason = first == root ? str_cat("exact duplicate of ", name(root))
                                     : str_cat("exact duplicate of ", name(first),
                                               ", itself a near duplicate of ", name(root),
                                               " (Jaccard ", jaccard, through, ")");
    } else {
      ++result.num_near;
      verdict.reason =
          str_cat("near duplicate of ", name(root), " (Jaccard ", jaccard, through, ")");
    }
  }
  result.timings.verify_seconds = seconds_since(phase_start);
  result.timings.total_seconds = seconds_since(start);
  return result;
}

}  // namespace sluice
