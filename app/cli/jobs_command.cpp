// sluice jobs: the job files `generate --job` and the app leave behind.
//   sluice jobs list [DIR]                  every *.sluicejob in DIR (default: the current one)
//   sluice jobs show FILE                   source, model, parameters, counts
//   sluice jobs export FILE --format F --output O [--dpo-rule R] [--score-field K]
//                     [--include-failed] [--flatten-output]
// Exit status: 0 done, 3 exported but some stored rows do not read back (each is named with its
// row and error; the others are exported), 1 failed, 2 usage.
#include <QCommandLineParser>
#include <cstdio>

#include "app/batch_response.h"
#include "app/cli/cli_command.h"
#include "app/cli/cli_options.h"
#include "engine/core/error.h"
#include "engine/data/export_dpo.h"
#include "engine/data/exporters.h"
#include "engine/jobs/job_listing.h"
#include "engine/jobs/job_store.h"

namespace sluice::cli {

namespace {

constexpr const char* kCommand = "jobs";

std::string counts_text(const JobCounts& c) {
  return str_cat(c.done, " done, ", c.failed, " failed, ", c.skipped, " skipped",
                 c.unreadable > 0 ? str_cat(", ", c.unreadable, " unreadable") : std::string(),
                 c.total_rows >= 0 ? str_cat(" of ", c.total_rows, " rows")
                                   : std::string(", total not known yet"));
}

int run_list(const QStringList& args) {
  const std::string dir = args.isEmpty() ? "." : args.front().toStdString();
  const auto jobs = list_jobs(dir);
  if (jobs.empty()) std::printf("no jobs (*.sluicejob) in %s\n", dir.c_str());
  for (const auto& job : jobs) {
    if (!job.error.empty()) {
      std::printf("%s\tunreadable: %s\n", job.path.c_str(), job.error.c_str());
      continue;
    }
    std::printf("%s\t%s\t%s\t%s\n", job.path.c_str(), job.info.created_at.c_str(), job.info.source_path.c_str(),
                counts_text(job.counts).c_str());
  }
  return 0;
}

int run_show(const QStringList& args) {
  if (args.size() != 1) throw UsageError("jobs show takes one job file");
  const auto job = JobStore::open(args.front().toStdString());
  const JobInfo& info = job->info();
  std::printf("job: %s\ncreated: %s\nsource: %s (%s, %lld bytes, sha256 %s)\nmodel: %s\nrows: %s\nparameters:\n%s\n",
              job->path().c_str(), info.created_at.c_str(), info.source_path.c_str(), info.source_format.c_str(),
              static_cast<long long>(info.source_size_bytes), info.source_sha256.c_str(), info.model_path.c_str(),
              counts_text(job->counts()).c_str(), info.params.dump(2).c_str());
  return 0;
}

int run_export(const QStringList& args) {
  QCommandLineParser parser;
  parser.addHelpOption();
  parser.addOptions({
      {"format", "jsonl, csv, alpaca, openai, sharegpt, dpo or openai-batch.", "FORMAT"},
      {"output", "The file to write.", "FILE"},
      {"dpo-rule",
       "For dpo: longest (default), shortest, first, last or score; rows picked in the app's "
       "Pairs view use their picks instead.",
       "RULE"},
      {"score-field", "For --dpo-rule score: the sample field holding the score (default score).",
       "KEY"},
      {"include-failed", "jsonl and csv: also export failed and skipped rows."},
      {"flatten-output",
       "csv: a column per top-level key of JSON outputs (output.<key>), in the JSON Schema's "
       "order."},
  });
  parser.addPositionalArgument("job", "The job file.");
  QStringList argv = args;
  argv.prepend("sluice jobs export");
  if (!parser.parse(argv)) throw UsageError(parser.errorText().toStdString());
  if (parser.positionalArguments().size() != 1) throw UsageError("jobs export takes one job file");
  ExportOptions options;
  ExportFormat format;
  try {
    format = parse_export_format(required_option(parser, "format").toStdString());
    if (parser.isSet("dpo-rule")) options.dpo_rule = parse_dpo_rule(parser.value("dpo-rule").toStdString());
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  if (parser.isSet("score-field")) options.score_field = parser.value("score-field").toStdString();
  options.include_failed = parser.isSet("include-failed");
  options.flatten_output = parser.isSet("flatten-output");
  if (options.flatten_output && format != ExportFormat::Csv)
    throw UsageError("--flatten-output needs --format csv");
  const std::string output = required_option(parser, "output").toStdString();
  const auto job = JobStore::open(parser.positionalArguments().front().toStdString());
  const ExportStats stats = export_job(*job, format, output, with_batch_responses(options));
  for (const UnreadableRow& row : stats.unreadable_rows)
    std::fprintf(stderr, "row %lld left out: %s\n", static_cast<long long>(row.row_index),
                 row.error.c_str());
  const std::string left_out = describe_left_out(stats);
  std::fprintf(stderr, "wrote %lld records from %lld rows to %s (%s)\n",
               static_cast<long long>(stats.records_written),
               static_cast<long long>(stats.rows_written), output.c_str(),
               left_out.empty() ? "0 rows left out" : left_out.c_str());
  if (format == ExportFormat::DpoPairs)
    std::fprintf(stderr, "dpo pairs: %s\n", describe_dpo_sources(stats, options).c_str());
  return stats.unreadable_rows.empty() ? 0 : 3;
}

}  // namespace

int run_jobs(const QStringList& args) {
  try {
    if (args.isEmpty()) throw UsageError("jobs needs a subcommand: list, show or export");
    const QString sub = args.front();
    const QStringList rest = args.mid(1);
    if (sub == "list") return run_list(rest);
    if (sub == "show") return run_show(rest);
    if (sub == "export") return run_export(rest);
    throw UsageError("unknown jobs subcommand '" + sub.toStdString() + "' (list, show, export)");
  } catch (const UsageError& e) {
    print_error(kCommand, e.what());
    return 2;
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 1;
  }
}

}  // namespace sluice::cli
