// sluice pipeline run FILE: a multi-step job (app/pipeline) from its description, in a folder of
// its own (--dir; by default beside FILE, named after it). Running it again runs only the steps
// whose inputs changed and resumes a step a kill interrupted.
#include <QCommandLineParser>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>

#include "app/cli/cli_command.h"
#include "app/cli/cli_options.h"
#include "app/cli/progress_printer.h"
#include "app/model_host.h"
#include "app/pipeline/pipeline_runner.h"
#include "engine/core/error.h"
#include "engine/grammar/grammar_cache.h"

namespace sluice::cli {

namespace {

constexpr const char* kCommand = "pipeline";

volatile std::sig_atomic_t g_pipeline_interrupted = 0;

void on_pipeline_interrupt(int) {
  g_pipeline_interrupted = 1;
}

std::string default_dir(const std::string& description) {
  const std::filesystem::path p(description);
  return (p.parent_path() / (p.stem().string() + ".pipeline")).string();
}

void print_step_line(const StepRun& run) {
  std::fprintf(stderr,
               "step %s: %s%lld rows in, %lld out, %lld model calls, %lld tokens generated, "
               "%.1f s%s%s\n",
               run.name.c_str(), run.was_cached ? "cached (key unchanged): " : "",
               static_cast<long long>(run.rows_in), static_cast<long long>(run.rows_out),
               static_cast<long long>(run.model_calls),
               static_cast<long long>(run.generated_tokens), run.seconds,
               run.note.empty() ? "" : "; ", run.note.c_str());
}

int run_pipeline_run(const QStringList& args) {
  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Run a multi-step job from its description file (JSON): generate, judge, filter, dedup and "
      "export, each step under a cache key in the pipeline's folder.");
  parser.addHelpOption();
  parser.addOptions({
      {"dir", "The pipeline's folder (default: FILE's name with .pipeline, beside it).", "DIR"},
      {"quiet", "No progress on stderr."},
  });
  // FILE first, then the options (parse_command_line refuses stray arguments).
  QStringList options = args;
  std::string file;
  if (!options.isEmpty() && !options.front().startsWith('-'))
    file = options.takeFirst().toStdString();
  parse_command_line(
      parser, options, "pipeline run",
      "\nExit status: 0 done, 1 a step failed or was interrupted (what it finished is "
      "kept; run again to resume), 2 a usage error.\n");
  if (file.empty()) throw UsageError("give the description file: sluice pipeline run FILE");
  const std::string dir =
      parser.isSet("dir") ? parser.value("dir").toStdString() : default_dir(file);
  const bool quiet = parser.isSet("quiet");

  auto grammars = std::make_shared<GrammarCache>();
  PipelineDescription description = read_pipeline_description(file, *grammars);
  ModelHost host({}, grammars);
  PipelineRunner runner(std::move(description), dir, host);
  ProgressPrinter progress(quiet);
  PipelineEvents events;
  events.on_step_start = [&](const PipelineStep& step, size_t index) {
    if (!quiet) std::fprintf(stderr, "step %zu: %s\n", index + 1, step.name.c_str());
  };
  events.on_step_done = [&](const StepRun& run) {
    if (!quiet) print_step_line(run);
  };
  events.on_note = [&](const std::string& text) { progress.note(text); };
  std::atomic<bool> cancel{false};
  events.on_progress = [&](const std::string&, const StepStats& stats, const JobProgress& p) {
    if (g_pipeline_interrupted) cancel = true;
    progress.update(stats, p);
  };
  g_pipeline_interrupted = 0;
  std::signal(SIGINT, on_pipeline_interrupt);
  std::signal(SIGTERM, on_pipeline_interrupt);
  const PipelineResult result = runner.run(events, &cancel);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (result.is_cancelled) {
    print_error(kCommand, "interrupted; what the steps finished is in " + dir +
                              "; run the same command again to resume");
    return 1;
  }
  if (!result.export_dir.empty()) {
    std::fprintf(stderr, "dataset: %s (%lld rows)\nreport: %s\n", result.export_dir.c_str(),
                 static_cast<long long>(result.rows_exported), result.report_path.c_str());
  }
  return 0;
}

}  // namespace

int run_pipeline(const QStringList& args) {
  try {
    if (args.isEmpty() || args.front() == "--help" || args.front() == "-h") {
      std::printf(
          "Usage: sluice pipeline run FILE [--dir DIR]\n\n"
          "A multi-step job from a description file: generate, judge, filter, dedup, export.\n"
          "See `sluice pipeline run --help`.\n");
      return args.isEmpty() ? 2 : 0;
    }
    if (args.front() != "run")
      throw UsageError("unknown pipeline command '" + args.front().toStdString() + "'; use run");
    return run_pipeline_run(args.mid(1));
  } catch (const UsageError& e) {
    print_error(kCommand, std::string(e.what()) + " (see sluice pipeline run --help)");
    return 2;
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 1;
  }
}

}  // namespace sluice::cli
