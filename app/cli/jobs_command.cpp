// sluice jobs: the job files `generate --job` and the app leave behind.
//   sluice jobs list [DIR]                  every *.sluicejob in DIR (default: the app's jobs
//                                           folder, where the desktop app saves new jobs)
//   sluice jobs show FILE                   source, model, parameters, counts, whether a
//                                           process runs it (or died running it), and what its
//                                           grammars' compiles ignored or dropped
//   sluice jobs compare A B [--rows N] [--width W]
//                                           two jobs over one input: statistics side by side,
//                                           and the first N rows whose outputs differ
//   sluice jobs export FILE --format F --output O [--dpo-rule R] [--score-field K]
//                     [--reviewed-only] [--valid-only] [--include-failed] [--flatten-output]
//                     [--reasoning separate|keep|strip]
//                                           with --format dpo, stderr says how many pairs came
//                                           from review picks, how many from the rule, and how
//                                           many of the rule's were ties
//   sluice jobs export FILE --format hub --output DIR [--overwrite] [--valid-only]
//                     [--reasoning separate|keep|strip]
//                                           a Hugging Face Hub folder (engine/export/export_hub.h):
//                                           data/train.jsonl, data/train.parquet, README.md
// Exit status: 0 done, 3 exported but some stored rows do not read back (each is named with its
// row and error; the others are exported), 1 failed, 2 usage.
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <cstdio>

#include "app/batch_response.h"
#include "app/cli/cli_command.h"
#include "app/cli/cli_options.h"
#include "app/jobs_directory.h"
#include "engine/core/error.h"
#include "engine/export/export_dpo.h"
#include "engine/export/export_hub.h"
#include "engine/export/exporters.h"
#include "engine/jobs/job_comparison.h"
#include "engine/jobs/job_listing.h"
#include "engine/jobs/job_lock.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/job_table.h"

namespace sluice::cli {

namespace {

constexpr const char* kCommand = "jobs";

// The finished rows first: those a resume does not run again (what it reports as already in the
// job), failed and skipped ones included.
std::string counts_text(const JobCounts& c) {
  const std::string parts =
      str_cat(" (", c.done, " done, ", c.failed, " failed, ", c.skipped, " skipped",
              c.unreadable > 0 ? str_cat(", ", c.unreadable, " unreadable") : std::string(), ")");
  if (c.total_rows >= 0)
    return str_cat(c.finished(), " of ", c.total_rows, " rows finished", parts);
  return str_cat(c.finished(), " rows finished", parts, ", total not known yet");
}

int run_list(const QStringList& args) {
  if (args.size() > 1) throw UsageError("jobs list takes at most one folder");
  if (args.isEmpty()) {
    const std::string dir = QDir::toNativeSeparators(jobsDirectory()).toStdString();
    std::fprintf(stderr,
                 "jobs in the app's jobs folder %s (`sluice jobs list DIR` lists another)\n",
                 dir.c_str());
    if (!QFileInfo(jobsDirectory()).isDir()) {
      std::printf("no jobs (*.sluicejob) in %s: the folder does not exist yet\n", dir.c_str());
      return 0;
    }
  }
  const std::string dir =
      args.isEmpty() ? jobsDirectory().toStdString() : args.front().toStdString();
  const auto jobs = list_jobs(dir);
  if (jobs.empty()) std::printf("no jobs (*.sluicejob) in %s\n", dir.c_str());
  for (const auto& job : jobs) {
    if (!job.error.empty()) {
      std::printf("%s\tunreadable: %s\n", job.path.c_str(), job.error.c_str());
      continue;
    }
    std::printf("%s\t%s\t%s\t%s\n", job.path.c_str(), job.info.created_at.c_str(),
                job.info.source_path.c_str(), counts_text(job.counts).c_str());
  }
  return 0;
}

// Whether a process runs the job now, or the last one died mid-run, from its lock file (read, not
// taken: a reader must never refuse a process starting the job).
std::string state_text(const std::string& path, const JobCounts& counts) {
  const JobLockStatus lock = inspect_job_lock(path);
  const std::string holder = describe_job_lock_holder(lock.holder);
  switch (lock.state) {
    case JobLockStatus::State::Running:
      return str_cat("running in ", holder, "; the counts grow while it runs");
    case JobLockStatus::State::Abandoned:
      return str_cat("stopped mid-run: ", holder,
                     " ended without finishing (killed or crashed); the rows counted here are "
                     "safe, and `sluice generate --resume ",
                     path, "` runs the others");
    case JobLockStatus::State::Unknown:
      return str_cat("locked by ", holder, "; whether it still runs cannot be told from here");
    case JobLockStatus::State::Free:
      break;
  }
  if (counts.total_rows >= 0 && counts.finished() >= counts.total_rows) return "finished";
  return str_cat("not running; `sluice generate --resume ", path, "` runs the unfinished rows");
}

int run_show(const QStringList& args) {
  if (args.size() != 1) throw UsageError("jobs show takes one job file");
  const auto job = JobStore::open(args.front().toStdString());
  const JobInfo& info = job->info();
  const JobCounts counts = job->counts();
  std::printf(
      "job: %s\ncreated: %s\nsource: %s (%s, %lld bytes, sha256 %s)\nmodel: %s\nrows: %s\nstate: "
      "%s\nparameters:\n%s\n",
      job->path().c_str(), info.created_at.c_str(), info.source_path.c_str(),
      info.source_format.c_str(), static_cast<long long>(info.source_size_bytes),
      info.source_sha256.c_str(), info.model_path.c_str(), counts_text(counts).c_str(),
      state_text(job->path(), counts).c_str(), info.params.dump(2).c_str());
  if (!info.grammar_notes.empty()) {
    std::printf("grammar notes (what the compile ignored or dropped):\n");
    for (const std::string& note : info.grammar_notes) std::printf("  %s\n", note.c_str());
    if (info.has_more_grammar_notes)
      std::printf("  ... and more (a job keeps the first %zu)\n", kMaxJobGrammarNotes);
  }
  return 0;
}

// Returns text on one line (line breaks as "⏎"), cut to width characters with "…".
QString clip(const std::string& text, int width) {
  QString line = QString::fromStdString(text);
  line.replace("\r\n", QStringLiteral("\u23CE"))
      .replace('\n', QStringLiteral("\u23CE"))
      .replace('\t', ' ');
  if (line.size() > width) line = line.left(width - 1) + QStringLiteral("\u2026");
  return line;
}

// Prints a and b side by side in columns of width characters.
void print_side_by_side(const std::string& a, const std::string& b, int width) {
  std::printf("%s | %s\n", clip(a, width).leftJustified(width).toStdString().c_str(),
              clip(b, width).toStdString().c_str());
}

std::string number_text(double value) {
  return QString::number(value, 'f', 1).toStdString();
}

void print_stats_row(const std::string& label, const std::string& a, const std::string& b) {
  std::printf("%-24s %-20s %s\n", label.c_str(), a.c_str(), b.c_str());
}

void print_comparison_stats(const JobComparisonStats& stats) {
  print_stats_row("", "A", "B");
  const auto row = [](const std::string& label, int64_t a, int64_t b) {
    print_stats_row(label, std::to_string(a), std::to_string(b));
  };
  row("rows", stats.a.num_rows, stats.b.num_rows);
  row("done", stats.a.num_done, stats.b.num_done);
  row("failed", stats.a.num_failed, stats.b.num_failed);
  row("skipped", stats.a.num_skipped, stats.b.num_skipped);
  const auto unit = [](const JobSideStats& side) {
    return side.is_length_in_chars ? " chars" : " tokens";
  };
  print_stats_row("output length, mean", number_text(stats.a.mean_output_length) + unit(stats.a),
                  number_text(stats.b.mean_output_length) + unit(stats.b));
  print_stats_row("output length, median",
                  number_text(stats.a.median_output_length) + unit(stats.a),
                  number_text(stats.b.median_output_length) + unit(stats.b));
  for (const FinishReasonCounts& counts : finish_reason_table(stats))
    row("finish " + counts.finish_reason, counts.num_a, counts.num_b);
  std::printf("\n%lld rows in both, %lld differ; %lld only in A, %lld only in B\n",
              static_cast<long long>(stats.num_matched_rows),
              static_cast<long long>(stats.num_differing_rows),
              static_cast<long long>(stats.num_only_in_a),
              static_cast<long long>(stats.num_only_in_b));
}

// Prints one differing row: its prompt, then A's and B's first sample side by side.
void print_differing_row(const RowResult& a, const RowResult& b, int width) {
  const int column = std::max(8, (width - 3) / 2);
  const auto heading = [](const char* side, const RowResult& row) {
    if (row.samples.empty()) return str_cat(side, " (", to_string(row.status), ")");
    return str_cat(side, " (", to_string(row.status), ", ", row.samples[0].finish_reason, ", ",
                   row.samples[0].output_tokens, " tokens)");
  };
  const auto text = [](const RowResult& row) {
    return row.samples.empty() ? row.error : row.samples[0].output;
  };
  std::printf("\nrow %lld: %s\n", static_cast<long long>(a.row_index),
              clip(a.prompt, std::max(8, width - 10)).toStdString().c_str());
  print_side_by_side(heading("A", a), heading("B", b), column);
  print_side_by_side(text(a), text(b), column);
}

int run_compare(const QStringList& args) {
  QCommandLineParser parser;
  parser.addOptions({
      {"rows", "Also print the first N rows whose outputs differ, side by side.", "N"},
      {"width", "The width of those rows in characters (default 120).", "W"},
  });
  parser.addPositionalArgument("a", "The first job file.");
  parser.addPositionalArgument("b", "The second job file, over the same input file.");
  parser.addHelpOption();
  QStringList argv = args;
  argv.prepend("sluice jobs compare");
  if (!parser.parse(argv)) throw UsageError(parser.errorText().toStdString());
  if (parser.isSet("help")) {
    std::printf("%s", parser.helpText().toStdString().c_str());
    return 0;
  }
  if (parser.positionalArguments().size() != 2)
    throw UsageError("jobs compare takes two job files");
  const long long num_rows = option_int(parser, "rows", 0, 0, 1'000'000);
  const int width = static_cast<int>(option_int(parser, "width", 120, 40, 10'000));
  const auto a = JobTable::open(parser.positionalArguments()[0].toStdString());
  const auto b = JobTable::open(parser.positionalArguments()[1].toStdString());
  const JobComparisonResult result = compare_jobs(*a, *b);
  std::printf("A: %s (%s)\nB: %s (%s)\ninput: %s\n\n", a->path().c_str(),
              a->info().model_path.c_str(), b->path().c_str(), b->info().model_path.c_str(),
              a->info().source_path.c_str());
  print_comparison_stats(result.stats);
  const auto num_shown =
      std::min<size_t>(static_cast<size_t>(num_rows), result.differing_row_indices.size());
  for (size_t i = 0; i < num_shown; ++i) {
    const int64_t row_index = result.differing_row_indices[i];
    const std::optional<RowResult> row_a = a->row(row_index);
    const std::optional<RowResult> row_b = b->row(row_index);
    if (row_a && row_b) print_differing_row(*row_a, *row_b, width);
  }
  return 0;
}

// Prints what an export left out and names the unreadable rows; returns the exit status.
int report_export(const ExportStats& stats, const std::string& output) {
  for (const UnreadableRow& row : stats.unreadable_rows)
    std::fprintf(stderr, "row %lld left out: %s\n", static_cast<long long>(row.row_index),
                 row.error.c_str());
  const std::string left_out = describe_left_out(stats);
  std::fprintf(stderr, "wrote %lld records from %lld rows to %s (%s)\n",
               static_cast<long long>(stats.records_written),
               static_cast<long long>(stats.rows_written), output.c_str(),
               left_out.empty() ? "0 rows left out" : left_out.c_str());
  return stats.unreadable_rows.empty() ? 0 : 3;
}

int run_hub_export(const JobStore& job, const std::string& dir, const ExportOptions& options,
                   bool overwrite) {
  const HubExportStats stats = export_job_hub(job, dir, options, overwrite);
  const int status = report_export(stats.rows, dir);
  std::fprintf(stderr, "hub folder: %llu Parquet bytes in %zu row groups, %llu JSONL bytes\n",
               static_cast<unsigned long long>(stats.folder.parquet_bytes),
               stats.folder.num_row_groups,
               static_cast<unsigned long long>(stats.folder.jsonl_bytes));
  return status;
}

int run_export(const QStringList& args) {
  QCommandLineParser parser;
  parser.addHelpOption();
  parser.addOptions({
      {"format", "jsonl, csv, alpaca, openai, sharegpt, dpo, openai-batch or hub.", "FORMAT"},
      {"output", "The file to write (for hub: the folder).", "FILE"},
      {"overwrite",
       "For hub: write into a folder that is not empty (replacing README.md, data/train.jsonl "
       "and data/train.parquet; other files stay)."},
      {"dpo-rule",
       "For dpo: longest (default), shortest, first, last or score; rows picked in the app's "
       "Pairs view use their picks instead (rows marked unusable or a tie there are left out). "
       "A rule that cannot tell the two samples apart (equal lengths or scores; for longest and "
       "shortest, both cut at max_tokens) still writes the pair, the lower sample chosen, and "
       "counts it as a tie.",
       "RULE"},
      {"reviewed-only",
       "For dpo: only the rows reviewed in the app's Pairs view; the others are left out."},
      {"valid-only",
       "Leave out the rows whose output does not follow the job's structured output (a JSON "
       "schema, regex, choice or grammar; the verdict kept with each row). Rows without a "
       "verdict (free text, or stored before verdicts were kept) stay."},
      {"score-field", "For --dpo-rule score: the sample field holding the score (default score).",
       "KEY"},
      {"include-failed", "jsonl and csv: also export failed and skipped rows."},
      {"flatten-output",
       "csv: a column per top-level key of JSON outputs (output.<key>), in the JSON Schema's "
       "order."},
      {"reasoning",
       "A thinking model's reasoning: separate (default; a field or column of its own), keep "
       "(in the output before the answer, in <think>...</think>) or strip (left out).",
       "MODE"},
  });
  parser.addPositionalArgument("job", "The job file.");
  QStringList argv = args;
  argv.prepend("sluice jobs export");
  if (!parser.parse(argv)) throw UsageError(parser.errorText().toStdString());
  if (parser.positionalArguments().size() != 1) throw UsageError("jobs export takes one job file");
  ExportOptions options;
  ExportFormat format = ExportFormat::Jsonl;
  const std::string format_name = required_option(parser, "format").toStdString();
  const bool is_hub = format_name == "hub";
  try {
    if (!is_hub) format = parse_export_format(format_name);
    if (parser.isSet("dpo-rule"))
      options.dpo_rule = parse_dpo_rule(parser.value("dpo-rule").toStdString());
    if (parser.isSet("reasoning"))
      options.reasoning = parse_reasoning_export(parser.value("reasoning").toStdString());
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  if (parser.isSet("score-field")) options.score_field = parser.value("score-field").toStdString();
  options.include_failed = parser.isSet("include-failed");
  options.flatten_output = parser.isSet("flatten-output");
  if (options.flatten_output && (is_hub || format != ExportFormat::Csv))
    throw UsageError("--flatten-output needs --format csv");
  options.reviewed_only = parser.isSet("reviewed-only");
  options.leave_out_invalid = parser.isSet("valid-only");
  if (options.reviewed_only && (is_hub || format != ExportFormat::DpoPairs))
    throw UsageError("--reviewed-only needs --format dpo");
  if (parser.isSet("overwrite") && !is_hub) throw UsageError("--overwrite needs --format hub");
  if (is_hub && (parser.isSet("dpo-rule") || parser.isSet("include-failed")))
    throw UsageError("--format hub takes neither --dpo-rule nor --include-failed");
  const std::string output = required_option(parser, "output").toStdString();
  const auto job = JobStore::open(parser.positionalArguments().front().toStdString());
  if (is_hub) return run_hub_export(*job, output, options, parser.isSet("overwrite"));
  const ExportStats stats = export_job(*job, format, output, with_batch_responses(options));
  const int status = report_export(stats, output);
  if (format == ExportFormat::DpoPairs)
    std::fprintf(stderr, "dpo pairs: %s\n", describe_dpo_sources(stats, options).c_str());
  return status;
}

}  // namespace

int run_jobs(const QStringList& args) {
  try {
    if (args.isEmpty()) throw UsageError("jobs needs a subcommand: list, show, compare or export");
    const QString sub = args.front();
    const QStringList rest = args.mid(1);
    if (sub == "list") return run_list(rest);
    if (sub == "show") return run_show(rest);
    if (sub == "compare") return run_compare(rest);
    if (sub == "export") return run_export(rest);
    throw UsageError("unknown jobs subcommand '" + sub.toStdString() +
                     "' (list, show, compare, export)");
  } catch (const UsageError& e) {
    print_error(kCommand, e.what());
    return 2;
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 1;
  }
}

}  // namespace sluice::cli
