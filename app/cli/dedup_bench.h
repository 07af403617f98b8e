// `sluice bench dedup`: deduplication at scale on synthetic rows (engine/curate/synthetic_rows.h)
// with planted exact and near duplicates — N rows of W Zipf-drawn words, K exact copies and K
// copies with at most 3 words changed — run through find_duplicates at each thread count given,
// printed as one table: seconds per phase, duplicates found, the near pass's recall and
// precision against what was planted. The target: 100,000 rows of 200 words in under
// 60 s on 2 cores.
#pragma once

#include <QStringList>

namespace sluice::cli {

// Runs the benchmark with the arguments after `bench dedup`; returns the exit code.
int run_bench_dedup(const QStringList& args);

}  // namespace sluice::cli
