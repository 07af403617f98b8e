// sluice generate: the whole instruction file goes to the engine at once (continuous batching
// over the paged KV cache); rows are appended to <output>.partial as they finish, so nothing
// finished is lost, and the final file is written in input order when the run ends.
#include <QCommandLineParser>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "app/cli/cli_command.h"
#include "app/cli/cli_options.h"
#include "app/cli/progress_printer.h"
#include "app/generation_job.h"
#include "engine/core/error.h"

namespace sluice::cli {

namespace {

constexpr const char* kCommand = "generate";

struct GenerateArgs {
  GenerationJobSpec job;
  std::string output_path;
  bool quiet = false;
};

GenerateArgs parse_args(const QStringList& args) {
  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Generate one output per row of an instruction file (JSONL {\"prompt\", \"id\"}).");
  parser.addHelpOption();
  parser.addOptions({
      {"model", "Model: a Hugging Face directory, a .gguf file or a llama2.c .bin.", "PATH"},
      {"tokenizer", "Tokenizer file, when not beside or inside the model.", "PATH"},
      {"input",
       "Instruction file: JSONL rows {\"prompt\": ..., \"id\": ...} (or an Alpaca JSON array).",
       "FILE"},
      {"output", "Where to write the JSONL results (input order).", "FILE"},
      {"limit", "Only the first N rows.", "N"},
      {"token-ids", "Also write output_token_ids."},
      {"quiet", "No progress on stderr."},
  });
  add_sampling_options(parser);
  add_engine_options(parser);
  parse_command_line(
      parser, args, "generate",
      "\nExit status: 0 all rows done, 3 some rows failed (each is in the output with its error),\n"
      "1 the run failed, 2 a usage error.\n");
  GenerateArgs a;
  a.job.model_path = required_option(parser, "model").toStdString();
  a.job.tokenizer_path = parser.value("tokenizer").toStdString();
  a.job.input_path = required_option(parser, "input").toStdString();
  a.output_path = required_option(parser, "output").toStdString();
  a.job.limit = static_cast<size_t>(option_int(parser, "limit", 0, 1, 1LL << 40));
  a.job.with_token_ids = parser.isSet("token-ids");
  a.quiet = parser.isSet("quiet");
  a.job.sampling = read_sampling_options(parser);
  a.job.engine = read_engine_options(parser);
  a.job.num_threads = read_thread_count(parser);
  a.job.device = read_device(parser);
  return a;
}

// Runs the whole file through the engine; returns the number of rows that ended in an error.
size_t run_job(const GenerateArgs& a) {
  GenerationJob job(a.job);
  job.load();
  const ModelSession& session = job.session();
  if (!a.quiet) {
    std::fprintf(stderr, "model: %s (%s, %s, %.1f MB)\ntokenizer: %s\n",
                 session.model->config.describe().c_str(), session.model->format_name().c_str(),
                 session.model->weight_dtypes().c_str(),
                 static_cast<double>(session.model->weight_bytes()) / 1e6,
                 session.tokenizer->describe().c_str());
  }
  const std::string partial_path = a.output_path + ".partial";
  std::ofstream partial(partial_path, std::ios::trunc);
  if (!partial) fail(partial_path, ": cannot write");
  ProgressPrinter progress(job.rows().size(), a.quiet);
  const size_t rows_failed = job.run(
      [&](const RowOutcome& row) {
        if (row.has_error)
          progress.note(str_cat(a.job.input_path, ":", row.row->line, ": ", row.error));
        partial << dump_jsonl_row(row.json) << '\n';
        partial.flush();
      },
      [&](const StepStats& stats, size_t rows_done) { progress.update(stats, rows_done); });
  progress.finish(job.rows().size());

  const std::string tmp_path = a.output_path + ".tmp";
  {
    std::ofstream out(tmp_path, std::ios::trunc);
    if (!out) fail(tmp_path, ": cannot write");
    for (const auto& row : job.results()) out << dump_jsonl_row(row) << '\n';
    out.flush();
    if (!out)
      fail(tmp_path, ": write failed (disk full?); the finished rows are in ", partial_path);
  }
  std::filesystem::rename(tmp_path, a.output_path);
  partial.close();
  std::filesystem::remove(partial_path);
  return rows_failed;
}

}  // namespace

int run_generate(const QStringList& args) {
  GenerateArgs parsed;
  try {
    parsed = parse_args(args);
  } catch (const UsageError& e) {
    print_error(kCommand, std::string(e.what()) + " (see sluice generate --help)");
    return 2;
  }
  try {
    const size_t failed = run_job(parsed);
    if (failed > 0) {
      print_error(kCommand, str_cat(failed, " row(s) failed; each is in ", parsed.output_path,
                                    " with its error"));
      return 3;
    }
    return 0;
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 1;
  }
}

}  // namespace sluice::cli
