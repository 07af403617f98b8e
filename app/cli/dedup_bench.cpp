#include "app/cli/dedup_bench.h"

#include <QCommandLineParser>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "app/cli/cli_options.h"
#include "engine/curate/dedup.h"
#include "engine/curate/synthetic_rows.h"

namespace sluice::cli {

namespace {

constexpr const char* kCommand = "bench dedup";

struct DedupBenchArgs {
  SyntheticRowsSpec rows;
  std::vector<int> thread_counts{0};
  double threshold = DedupOptions{}.threshold;
};

DedupBenchArgs parse_dedup_bench_args(const QStringList& args) {
  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Deduplicate synthetic rows with planted exact and near duplicates and print the time of "
      "each phase, what was found, and the near pass's recall and precision.");
  parser.addHelpOption();
  parser.addOptions({
      {"rows", "Rows (default 100000).", "N"},
      {"words", "Words per row (default 200).", "W"},
      {"planted", "Exact copies planted, and as many near copies (default 1000).", "K"},
      {"changed-words", "A near copy has 1 to this many words replaced (default 3).", "C"},
      {"vocabulary", "Distinct words, drawn Zipf-like (default 5000).", "V"},
      {"threads", "Thread counts, comma-separated: one run each (default: one per core).", "LIST"},
      {"threshold", "Jaccard threshold of near duplicates (default 0.8).", "J"},
      {"seed", "The rows' seed (default 1).", "S"},
  });
  parse_command_line(parser, args, kCommand);
  DedupBenchArgs a;
  a.rows.num_rows = static_cast<size_t>(option_int(parser, "rows", 100000, 1, 1LL << 31));
  a.rows.words_per_row = static_cast<int>(option_int(parser, "words", 200, 1, 1 << 20));
  const auto planted = static_cast<size_t>(option_int(parser, "planted", 1000, 0, 1LL << 30));
  a.rows.num_exact = planted;
  a.rows.num_near = planted;
  if (4 * planted > a.rows.num_rows)
    throw UsageError("--planted " + std::to_string(planted) + " needs at least " +
                     std::to_string(4 * planted) + " rows (each copy has a source of its own)");
  a.rows.max_changed_words = static_cast<int>(option_int(parser, "changed-words", 3, 1, 1 << 20));
  a.rows.vocabulary_size = static_cast<int>(option_int(parser, "vocabulary", 5000, 2, 1 << 24));
  a.rows.seed = static_cast<uint64_t>(option_int(parser, "seed", 1, 0, 1LL << 62));
  a.threshold = option_double(parser, "threshold", a.threshold);
  if (!(a.threshold > 0 && a.threshold <= 1)) throw UsageError("--threshold must be in (0, 1]");
  if (parser.isSet("threads")) {
    a.thread_counts.clear();
    for (const QString& t : parser.value("threads").split(',', Qt::SkipEmptyParts)) {
      bool ok = false;
      const int count = t.trimmed().toInt(&ok);
      if (!ok || count < 1 || count > 1024)
        throw UsageError("--threads expects thread counts such as 1,2");
      a.thread_counts.push_back(count);
    }
    if (a.thread_counts.empty()) throw UsageError("--threads names no thread count");
  }
  return a;
}

}  // namespace

int run_bench_dedup(const QStringList& args) {
  DedupBenchArgs a;
  try {
    a = parse_dedup_bench_args(args);
  } catch (const UsageError& e) {
    print_error(kCommand, std::string(e.what()) + " (see sluice bench dedup --help)");
    return 2;
  }
  try {
    std::fprintf(stderr, "bench dedup: generating %zu rows of %d words...\n", a.rows.num_rows,
                 a.rows.words_per_row);
    const auto generate_start = std::chrono::steady_clock::now();
    const SyntheticRows rows = make_synthetic_rows(a.rows);
    const double generate_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - generate_start).count();
    std::printf(
        "bench dedup: %zu rows of %d words (vocabulary %d, seed %llu), %zu exact and %zu "
        "near copies planted (1-%d words changed), threshold %.2f; rows generated in "
        "%.1f s\n\n",
        a.rows.num_rows, a.rows.words_per_row, a.rows.vocabulary_size,
        static_cast<unsigned long long>(a.rows.seed), a.rows.num_exact, a.rows.num_near,
        a.rows.max_changed_words, a.threshold, generate_seconds);
    std::printf(
        "| rows | words | threads | exact s | signatures s | LSH s | verify s | total s | CPU s | "
        "candidates | exact found | near found | near recall | near precision |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    DedupOptions options;
    int lsh_bands = 0, lsh_rows = 0;
    for (const int threads : a.thread_counts) {
      options.threshold = a.threshold;
      options.num_threads = threads;
      const std::clock_t cpu_start = std::clock();
      const DedupResult result = find_duplicates(rows.texts, options);
      const double cpu_seconds =
          static_cast<double>(std::clock() - cpu_start) / static_cast<double>(CLOCKS_PER_SEC);
      lsh_bands = result.lsh_bands;
      lsh_rows = result.lsh_rows;
      const std::string thread_count = threads == 0 ? "all" : std::to_string(threads);
      const PlantedScore score = score_planted(rows, result);
      const DedupTimings& t = result.timings;
      std::printf(
          "| %zu | %d | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %zu | %zu/%zu | %zu/%zu | "
          "%.4f | "
          "%.4f |\n",
          a.rows.num_rows, a.rows.words_per_row, thread_count.c_str(), t.exact_seconds,
          t.signature_seconds, t.lsh_seconds, t.verify_seconds, t.total_seconds, cpu_seconds,
          result.num_candidate_pairs, score.num_exact_found, a.rows.num_exact, score.num_near_found,
          a.rows.num_near, score.near_recall, score.near_precision);
      std::fflush(stdout);
    }
    std::printf(
        "\nnear duplicates: word %d-gram shingles, %d permutations in %d bands of %d "
        "rows, each LSH candidate verified by its exact Jaccard >= %.2f; seconds are wall "
        "clock, CPU s the process's CPU time (all threads) in find_duplicates\n",
        options.shingle_words, options.num_permutations, lsh_bands, lsh_rows, a.threshold);
    return 0;
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 1;
  }
}

}  // namespace sluice::cli
