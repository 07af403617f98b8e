// Synthetic rows with planted duplicates, the one generator that deduplication's test and
// `sluice bench dedup` share: num_rows rows of words_per_row words drawn from a Zipf-like
// vocabulary of pseudo-words (rank r has weight 1 / (r + 1), as natural text roughly has it),
// all from one seed, identical on every platform. Among them num_exact rows are copies of other
// rows (every other one with different case, spacing and punctuation, which normalisation
// removes) and num_near rows are copies with 1..max_changed_words words replaced. A source row is
// never itself a copy, so every planted pair is a cluster of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/curate/dedup.h"

namespace sluice {

struct SyntheticRowsSpec {
  size_t num_rows = 100000;
  int words_per_row = 200;
  int vocabulary_size = 5000;
  size_t num_exact = 0;       // planted exact duplicates
  size_t num_near = 0;        // planted near duplicates
  int max_changed_words = 3;  // a near duplicate has 1..max_changed_words words replaced
  uint64_t seed = 1;
};

struct SyntheticRows {
  std::vector<std::string> texts;     // [num_rows]
  std::vector<int64_t> exact_source;  // [num_rows]: the row this one copies, or -1
  std::vector<int64_t> near_source;   // [num_rows]: the row this one edits, or -1
};

// Returns the rows of spec. Throws Error when 2 * (num_exact + num_near) > num_rows (each
// planted copy needs a source of its own) or a size is out of range.
SyntheticRows make_synthetic_rows(const SyntheticRowsSpec& spec);

// How deduplication did on planted rows.
struct PlantedScore {
  size_t num_exact_found = 0;  // planted exact pairs whose two rows share a cluster
  size_t num_near_found = 0;   // the same, of near pairs
  size_t num_removed_exact = 0, num_correct_exact = 0;  // removals as an exact duplicate, and
  size_t num_removed_near = 0, num_correct_near = 0;    // those of a planted pair; near ones
  double near_recall = 0;     // num_near_found / num_near planted (1 when none planted)
  double near_precision = 0;  // num_correct_near / num_removed_near (1 when none removed)
};

// Scores result (of rows.texts) against the planted pairs.
PlantedScore score_planted(const SyntheticRows& rows, const DedupResult& result);

}  // namespace sluice
