// sluice generate: run a model over an instruction file. Every finished row is committed to a
// job file as it finishes (so a crash or Ctrl-C loses nothing and --resume picks up where it
// stopped); the output is written in input order from the job at the end, as JSONL rows or in
// an export format. Whether the output can be written is checked before the model loads.
#include <QCommandLineParser>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include "app/batch_response.h"
#include "app/cli/cli_command.h"
#include "app/cli/cli_options.h"
#include "app/cli/generate_options.h"
#include "app/cli/grammar_options.h"
#include "app/cli/progress_printer.h"
#include "app/cli/remote_options.h"
#include "app/generation_job.h"
#include "app/model_host.h"
#include "engine/core/error.h"
#include "engine/core/mapped_file.h"
#include "engine/export/export_dpo.h"
#include "engine/export/export_output.h"
#include "engine/export/exporters.h"
#include "engine/grammar/grammar_cache.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/output_check.h"
#include "engine/jobs/job_schema.h"

namespace sluice::cli {

namespace {

constexpr const char* kCommand = "generate";

volatile std::sig_atomic_t g_interrupted = 0;

void on_interrupt(int) {
  g_interrupted = 1;
}

struct GenerateArgs {
  GenerationSpec spec;
  std::string output_path;
  std::string job_path;     // --job, or "" for a job kept only while running
  std::string resume_path;  // --resume
  std::optional<ExportFormat> export_format;
  ExportOptions export_options;
  bool quiet = false;
  std::function<void(RemoteSpec&)> remote_override;  // --endpoint and friends given with --resume
  // Where the grammar was checked before the model loads, and where the run's engine compiles it
  // (the model host's cache): compiled once.
  std::shared_ptr<GrammarCache> grammars = std::make_shared<GrammarCache>();
};

// "\n", "\t" and "\\" in command-line text become the characters they name.
std::string unescape(const QString& text) {
  std::string out;
  const std::string s = text.toStdString();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() &&
        (s[i + 1] == 'n' || s[i + 1] == 't' || s[i + 1] == '\\')) {
      out += s[i + 1] == 'n' ? '\n' : (s[i + 1] == 't' ? '\t' : '\\');
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

void add_generate_options(QCommandLineParser& parser) {
  parser.addOptions({
      {"model",
       "Model: a Hugging Face directory, a .gguf file or a llama2.c .bin (or --endpoint instead).",
       "PATH"},
      {"tokenizer", "Tokenizer file, when not beside or inside the model.", "PATH"},
      {"input", "Instruction file: JSONL, JSON, CSV, TSV, text, ShareGPT or OpenAI messages.",
       "FILE"},
      {"output", "Where to write the results in input order (JSONL rows, or --export's format).",
       "FILE"},
      {"format",
       "Input format: auto (default), jsonl, json, csv, tsv, text, sharegpt, openai, openai-batch.",
       "FORMAT"},
      {"prompt-template",
       "Column template such as '{instruction}[\\n\\n{input}]' ([...] is dropped when a field in "
       "it is empty).",
       "TEXT"},
      {"system", "System prompt added to every conversation.", "TEXT"},
      {"chat-template", "Jinja chat template file to use instead of the model's.", "FILE"},
      {"no-chat-template", "Send the filled-in text as a plain completion."},
      {"job", "Keep the run in this job file (resumable, exportable with `sluice jobs`).", "FILE"},
      {"resume", "Resume the job in FILE with its own parameters (only unfinished rows run).",
       "FILE"},
      {"export", "Write --output as jsonl, csv, alpaca, openai, sharegpt, dpo or openai-batch.",
       "FORMAT"},
      {"dpo-rule",
       "Chosen sample for --export dpo: longest (default), shortest, first, last, score. A tie "
       "(equal lengths or scores; for longest and shortest, both samples cut at --max-tokens) "
       "still writes the pair, the lower sample chosen; stderr counts the ties.",
       "RULE"},
      {"flatten-output",
       "For --export csv: a column per top-level key of JSON outputs (output.<key>), in the "
       "JSON Schema's order."},
      {"reasoning",
       "For --export: a thinking model's reasoning separate (default; a field or column of its "
       "own), keep (in the output before the answer, in <think>...</think>) or strip.",
       "MODE"},
      {"on-bad-row", "A malformed input row: stop (default) or skip (it is recorded as skipped).",
       "POLICY"},
      {"on-long-prompt",
       "A prompt that does not fit the context: fail (default; the row is recorded as failed), "
       "skip (recorded as skipped) or truncate (its last tokens are kept, the BOS token first).",
       "POLICY"},
      {"limit", "Only the first N rows.", "N"},
      {"token-ids", "Also keep output_token_ids."},
      {"json-schema", "Constrain every output to JSON valid for the JSON Schema in FILE.", "FILE"},
      {"json-object", "Constrain every output to a JSON object."},
      {"regex", "Constrain every output to match the regular expression RE as a whole.", "RE"},
      {"choice", "Constrain every output to one of the texts given (repeat the option for each).",
       "TEXT"},
      {"grammar", "Constrain every output to the GBNF grammar in FILE (root rule `root`).", "FILE"},
      {"schema-column",
       "Constrain each row's output to the JSON Schema in the row's field COLUMN (an object, or "
       "a string holding one); a row whose schema does not compile fails, naming it.",
       "COLUMN"},
      {"schema-mode",
       "A JSON Schema keyword the grammar cannot enforce exactly: strict (default; the schema is "
       "refused, naming it) or best-effort (it is dropped with a note, and outputs that break it "
       "are marked invalid). For --json-schema, --schema-column and batch lines.",
       "MODE"},
      {"json-whitespace",
       "Whitespace JSON outputs may hold between tokens: flexible (default; pretty-printed too) "
       "or compact (none: JSON.stringify's separators). For --json-schema, --json-object, "
       "--schema-column and batch lines.",
       "MODE"},
      {"quiet", "No progress on stderr."},
  });
  add_sampling_options(parser);
  add_reasoning_options(parser);
  add_engine_options(parser);
  add_remote_options(parser);
}

// The grammar options: at most one, with the JSON options; a source that does not compile is a
// usage error. It is compiled through grammars, the cache the run's engine compiles through: the
// check is the compile.
std::optional<GrammarSource> read_grammar_source(const QCommandLineParser& parser,
                                                 const JsonGrammarOptions& json_options,
                                                 GrammarCache& grammars) {
  try {
    std::optional<GrammarSource> source = read_grammar_source_options(parser);
    if (!source) return std::nullopt;
    *source = with_json_options(std::move(*source), json_options);
    grammars.get(*source);  // refused now, before the model loads
    return source;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

GenerationSpec read_spec(const QCommandLineParser& parser, GrammarCache& grammars) {
  GenerationSpec s;
  if (auto remote = read_remote_options(parser)) {
    s.remote = std::move(*remote);
    for (const char* name : {"model", "tokenizer", "chat-template", "token-ids", "device"}) {
      if (parser.isSet(name)) {
        throw UsageError(str_cat("--", name,
                                 " does not go with --endpoint: the servers run their own ",
                                 "model, tokenizer and chat template"));
      }
    }
  } else {
    s.model_path = required_option(parser, "model").toStdString();
  }
  s.tokenizer_path = parser.value("tokenizer").toStdString();
  s.input_path = required_option(parser, "input").toStdString();
  try {
    if (parser.isSet("format"))
      s.format = parse_dataset_format(parser.value("format").toStdString());
    if (parser.isSet("on-bad-row"))
      s.on_bad_row = parse_bad_row_policy(parser.value("on-bad-row").toStdString());
    if (parser.isSet("on-long-prompt"))
      s.on_long_prompt = parse_long_prompt_policy(parser.value("on-long-prompt").toStdString());
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  s.prompt.column_template = unescape(parser.value("prompt-template"));
  s.prompt.system_prompt = unescape(parser.value("system"));
  s.prompt.use_chat_template = !parser.isSet("no-chat-template");
  if (parser.isSet("chat-template")) {
    if (parser.isSet("no-chat-template"))
      throw UsageError("give --chat-template or --no-chat-template, not both");
    s.prompt.chat_template = read_text_file(parser.value("chat-template").toStdString());
  }
  s.prompt.reasoning = read_reasoning_options(parser);
  s.limit = static_cast<size_t>(option_int(parser, "limit", 0, 1, 1LL << 40));
  s.with_token_ids = parser.isSet("token-ids");
  s.sampling = read_sampling_options(parser);
  s.json_grammar = read_json_grammar_options(parser);
  if (auto grammar = read_grammar_source(parser, s.json_grammar, grammars))
    s.sampling.grammar = std::make_shared<const GrammarSource>(std::move(*grammar));
  if (parser.isSet("schema-column")) {
    if (s.sampling.grammar)
      throw UsageError("give --schema-column or a grammar for every row, not both");
    s.schema_column = parser.value("schema-column").toStdString();
    if (s.schema_column.empty()) throw UsageError("--schema-column needs a column name");
  }
  s.engine = read_engine_options(parser);
  s.num_threads = read_thread_count(parser);
  s.device = read_device(parser);
  return s;
}

GenerateArgs parse_args(const QStringList& args) {
  QCommandLineParser parser;
  parser.setApplicationDescription("Generate outputs for every row of an instruction file.");
  parser.addHelpOption();
  add_generate_options(parser);
  parse_command_line(
      parser, args, kCommand,
      "\nExit status: 0 all rows done, 3 some rows failed (each is in the output with its error)\n"
      "or were left out of --export's output, 1 the run failed or stopped (finished rows stay in\n"
      "the job file), 2 a usage error.\n");
  GenerateArgs a;
  a.output_path = parser.value("output").toStdString();
  a.job_path = parser.value("job").toStdString();
  a.resume_path = parser.value("resume").toStdString();
  a.quiet = parser.isSet("quiet");
  if (parser.isSet("export")) {
    try {
      a.export_format = parse_export_format(parser.value("export").toStdString());
      if (parser.isSet("dpo-rule"))
        a.export_options.dpo_rule = parse_dpo_rule(parser.value("dpo-rule").toStdString());
      if (parser.isSet("reasoning"))
        a.export_options.reasoning =
            parse_reasoning_export(parser.value("reasoning").toStdString());
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    if (a.output_path.empty()) throw UsageError("--export needs --output");
  }
  a.export_options.flatten_output = parser.isSet("flatten-output");
  if (a.export_options.flatten_output && a.export_format != ExportFormat::Csv)
    throw UsageError("--flatten-output needs --export csv");
  if (!a.resume_path.empty()) {
    for (const char* name : {"model",
                             "input",
                             "job",
                             "format",
                             "prompt-template",
                             "system",
                             "chat-template",
                             "no-chat-template",
                             "max-tokens",
                             "temperature",
                             "top-p",
                             "top-k",
                             "seed",
                             "n",
                             "limit",
                             "on-long-prompt",
                             "json-schema",
                             "json-object",
                             "regex",
                             "choice",
                             "grammar",
                             "schema-column",
                             "schema-mode",
                             "json-whitespace"}) {
      if (parser.isSet(name))
        throw UsageError(std::string("--resume takes the job's own parameters; drop --") + name);
    }
    a.spec.device = read_device(parser);
    a.spec.num_threads = read_thread_count(parser);
    if (parser.isSet("endpoint") || has_remote_tuning(parser)) {
      a.remote_override = remote_overrides(parser);
    }
    return a;
  }
  if (a.output_path.empty() && a.job_path.empty()) throw UsageError("give --output, --job or both");
  a.spec = read_spec(parser, *a.grammars);
  if (a.export_format == ExportFormat::DpoPairs && a.spec.sampling.n < 2)
    throw UsageError("--export dpo pairs two samples of each prompt: give --n 2 or more");
  return a;
}

// With a grammar, each sample says whether its output is valid for it, judged by what the source
// means (output_check.h: a JSON Schema by the full validator, so "valid" means valid by the
// schema), with the reason when it is not ("invalid_reason"); false for an output cut off by
// max_tokens inside a structure. A null check: a row whose own schema did not compile, so
// nothing it holds is valid.
void add_validity(nlohmann::ordered_json& row, const RowResult& r, const OutputCheck* check) {
  const auto add = [&](nlohmann::ordered_json& target, const SampleResult& s) {
    // The verdict the job kept when the row finished; judged now for rows stored before that.
    const OutputVerdict verdict = s.valid ? OutputVerdict{*s.valid, s.invalid_reason}
                                  : check
                                      ? check->check(s.output)
                                      : OutputVerdict{false, "the row's schema did not compile"};
    target["valid"] = verdict.is_valid;
    if (!verdict.is_valid) target["invalid_reason"] = verdict.reason;
  };
  if (r.samples.size() == 1) {
    add(row, r.samples.front());
  } else if (row.contains("samples")) {
    for (size_t i = 0; i < r.samples.size(); ++i) add(row["samples"][i], r.samples[i]);
  }
}

// Writes the job's results in row order to a.output_path (via a temporary file) and returns
// what was written and left out: export formats leave out rows they cannot use, and any format
// leaves out stored rows that do not read back. With a grammar (the job's, or each row's own
// schema), rows say whether they are valid.
ExportStats write_output(JobStore& store, const GenerateArgs& a, const GenerationSpec& spec,
                         GrammarCache& grammars) {
  if (a.export_format)
    return export_job(store, *a.export_format, a.output_path,
                      with_batch_responses(a.export_options));
  ExportOutput out(a.output_path);
  ExportStats stats;
  std::unique_ptr<RowSchemas> row_schemas;
  if (!spec.schema_column.empty())
    row_schemas =
        std::make_unique<RowSchemas>(spec.schema_column, spec.input_path, spec.json_grammar);
  // The job's grammar ran: it compiles (a local run compiled it through grammars already).
  std::optional<OutputCheck> check;
  if (spec.sampling.grammar)
    check.emplace(*spec.sampling.grammar, grammars.get(*spec.sampling.grammar));
  store.for_each_result(
      [&](const RowResult& r) {
        nlohmann::ordered_json row = output_row_json(r);
        if (check) add_validity(row, r, &*check);
        if (row_schemas) {
          std::optional<OutputCheck> own;
          try {
            const GrammarSource source = row_schemas->source_for(r);
            own.emplace(source, grammars.get(source));
          } catch (const Error&) {
            // the row failed for it: its error says why
          }
          add_validity(row, r, own ? &*own : nullptr);
        }
        out.write(dump_jsonl_row(row));
        out.write("\n");
        stats.rows_written++;
        stats.records_written++;
      },
      [&](const UnreadableRow& row) { stats.leave_out_unreadable(row); });
  out.commit();
  return stats;
}

// Prints what the output holds when rows were left out of it, each unreadable row with its error.
void report_output(const ExportStats& stats, const GenerateArgs& a, ProgressPrinter& progress) {
  for (const UnreadableRow& row : stats.unreadable_rows)
    progress.note(str_cat("row ", row.row_index, " left out of the output: ", row.error));
  if (stats.rows_skipped == 0 && (!a.export_format || a.quiet)) return;
  const std::string left_out = describe_left_out(stats);
  progress.note(str_cat("wrote ", stats.records_written, " records from ", stats.rows_written,
                        " rows to ", a.output_path, left_out.empty() ? "" : " (" + left_out + ")"));
  if (a.export_format == ExportFormat::DpoPairs)
    progress.note(str_cat("dpo pairs: ", describe_dpo_sources(stats, a.export_options)));
}

// A job file whose run stopped before its first commit holds no parameters to resume with.
void check_resumable(const std::string& job_path) {
  if (!is_uninitialised_job_file(job_path)) return;
  fail(job_path,
       ": holds no rows: the run that created it stopped before its first commit, so there is "
       "nothing to resume; start the job again with --job ",
       job_path, " and the run's options (that replaces it)");
}

// Notes from the remote driver's threads, printed between progress lines.
class RunNotes {
 public:
  void add(const std::string& text) {
    const std::lock_guard lock(mutex_);
    notes_.push_back(text);
  }
  void print(ProgressPrinter& progress) {
    std::vector<std::string> taken;
    {
      const std::lock_guard lock(mutex_);
      taken.swap(notes_);
    }
    for (const std::string& text : taken) progress.note(text);
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> notes_;
};

// Creates the job at job_path (or resumes it), saying when it takes over a dead run's lock or
// replaces an uninitialised file, with the command line's remote overrides.
std::unique_ptr<GenerationJob> open_job(const GenerateArgs& a, const std::string& job_path,
                                        bool is_resume) {
  // Hours of generation must not end in "cannot write the output": ask before the model loads.
  if (!a.output_path.empty()) ExportOutput::check_destination(a.output_path);
  if (is_resume) check_resumable(job_path);
  auto job = is_resume ? GenerationJob::resume(job_path, a.spec.device, a.spec.num_threads)
                       : GenerationJob::create(a.spec, job_path);
  if (const auto& dead = job->lock_taken_over()) {
    std::fprintf(stderr,
                 "%s: taking over from %s, which stopped without releasing the job (killed or "
                 "crashed)\n",
                 job_path.c_str(), describe_job_lock_holder(*dead).c_str());
  }
  if (job->replaces_uninitialised_job()) {
    std::fprintf(stderr,
                 "replacing %s: its run stopped before the first commit, so it held no rows\n",
                 job_path.c_str());
  }
  if (a.remote_override) {
    try {
      job->change_remote(a.remote_override);
    } catch (const UsageError& e) {
      fail(e.what());
    }
  }
  return job;
}

// Says what runs the job (the model, or the remote servers) and which rows run again.
void print_job_header(const GenerationJob& job, const GenerateArgs& a, const std::string& job_path,
                      bool is_resume) {
  for (const UnreadableRow& row : job.unreadable_rows())
    std::fprintf(stderr, "row %lld does not read back; it runs again: %s\n",
                 static_cast<long long>(row.row_index), row.error.c_str());
  if (a.quiet) return;
  const char* what = is_resume ? "resuming job" : "job";
  if (job.is_remote()) {
    std::fprintf(stderr, "remote: %s\n%s %s\n", job.lease().service->describe().c_str(), what,
                 job_path.c_str());
    return;
  }
  const ModelSession& session = job.session();
  std::fprintf(stderr, "model: %s (%s, %s, %.1f MB)\ntokenizer: %s\n%s %s\n",
               session.model->config.describe().c_str(), session.model->format_name().c_str(),
               session.model->weight_dtypes().c_str(),
               static_cast<double>(session.model->weight_bytes()) / 1e6,
               session.tokenizer->describe().c_str(), what, job_path.c_str());
}

// Prints the job's grammar notes (what its grammars' compiles ignored or dropped) as they come,
// each once; at the end, how many were left out past the bound.
class GrammarNotePrinter {
 public:
  explicit GrammarNotePrinter(const GenerationJob& job) : job_(job) {}
  void print(ProgressPrinter& progress) {
    const std::vector<std::string>& lines = job_.grammar_notes().lines();
    for (; num_printed_ < lines.size(); ++num_printed_)
      progress.note(str_cat("sluice ", kCommand, ": ", lines[num_printed_]));
  }
  void finish(ProgressPrinter& progress) {
    print(progress);
    if (const size_t num_left_out = job_.grammar_notes().num_left_out(); num_left_out > 0)
      progress.note(str_cat("sluice ", kCommand, ": ... and ", num_left_out, " more"));
  }

 private:
  const GenerationJob& job_;
  size_t num_printed_ = 0;
};

// Runs the job with progress on stderr until it ends or SIGINT / SIGTERM cancels it.
RunSummary run_with_progress(GenerationJob& job, ProgressPrinter& progress, RunNotes& notes) {
  g_interrupted = 0;
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  std::atomic<bool> cancel{false};
  GrammarNotePrinter grammar_notes(job);
  grammar_notes.print(progress);  // the job's own grammar's
  notes.print(progress);          // from the endpoints' start-up check
  const RunSummary summary = job.run(
      [&](const RowResult& r, double) {
        // Skipped rows' errors already name the file and line; engine failures do not.
        if (r.status == RowStatus::Skipped) progress.note("skipped " + r.error);
        if (r.status == RowStatus::Failed)
          progress.note(str_cat(job.spec().input_path, ":", r.line, ": ", r.error));
      },
      [&](const StepStats& stats, const JobProgress& p) {
        if (g_interrupted) cancel = true;
        notes.print(progress);
        grammar_notes.print(progress);
        progress.update(stats, p);
      },
      &cancel);
  notes.print(progress);
  grammar_notes.finish(progress);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  progress.finish(summary.progress);
  return summary;
}

int run_job(const GenerateArgs& a) {
  const bool is_resume = !a.resume_path.empty();
  const std::string job_path =
      is_resume ? a.resume_path : (a.job_path.empty() ? a.output_path + ".sluicejob" : a.job_path);
  const bool is_temporary_job = !is_resume && a.job_path.empty();
  RunNotes notes;  // before the job: its remote driver's threads add to it until it goes
  auto job = open_job(a, job_path, is_resume);
  // The model host compiles grammars through the cache the command line's grammar was checked
  // with: compiled once.
  ModelHost host({}, a.grammars);
  job->load(host.lend_for_job(job->spec(), {}, [&](const std::string& text) { notes.add(text); }));
  print_job_header(*job, a, job_path, is_resume);
  ProgressPrinter progress(a.quiet);
  const RunSummary summary = run_with_progress(*job, progress, notes);
  if (summary.is_cancelled) {
    print_error(kCommand, str_cat("interrupted; the finished rows are in ", job_path,
                                  "; continue with --resume ", job_path));
    return 1;
  }
  if (!summary.stop_error.empty()) {
    print_error(kCommand, str_cat(summary.stop_error, "\n(the rows finished before it are in ",
                                  job_path, "; --on-bad-row skip records bad rows and goes on)"));
    return 1;
  }
  ExportStats written;
  if (!a.output_path.empty()) {
    try {
      written = write_output(job->store(), a, job->spec(), host.grammars());
    } catch (const Error& e) {
      fail(e.what(), "\n(the results are in the job ", job_path,
           "; write them with sluice jobs export ", job_path, ")");
    }
    report_output(written, a, progress);
  }
  const JobCounts counts = job->store().counts();
  if (is_temporary_job) {
    job.reset();
    std::filesystem::remove(job_path);
    std::filesystem::remove(job_path + "-wal");
    std::filesystem::remove(job_path + "-shm");
  }
  if (counts.failed + counts.skipped > 0) {
    const bool is_in_output = !a.output_path.empty() && !a.export_format;
    print_error(kCommand, str_cat(counts.failed, " row(s) failed and ", counts.skipped,
                                  " skipped; each is in the ", is_in_output ? "output" : "job",
                                  " with its error"));
    return 3;
  }
  return written.rows_skipped > 0 ? 3 : 0;
}

}  // namespace

GenerationSpec generation_spec_from_options(const QStringList& args, GrammarCache& grammars) {
  QCommandLineParser parser;
  add_generate_options(parser);
  if (!parser.parse(QStringList{QStringLiteral("sluice")} + args))
    throw UsageError(parser.errorText().toStdString());
  if (!parser.positionalArguments().isEmpty())
    throw UsageError("unexpected argument '" + parser.positionalArguments().front().toStdString() +
                     "'");
  for (const char* name : {"output", "job", "resume", "export", "dpo-rule", "reasoning",
                           "flatten-output", "quiet"}) {
    if (parser.isSet(name))
      throw UsageError(std::string("--") + name + " is not a step option (the pipeline has its own)");
  }
  return read_spec(parser, grammars);
}

int run_generate(const QStringList& args) {
  GenerateArgs parsed;
  try {
    parsed = parse_args(args);
  } catch (const UsageError& e) {
    print_error(kCommand, std::string(e.what()) + " (see sluice generate --help)");
    return 2;
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 1;
  }
  try {
    return run_job(parsed);
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 1;
  }
}

}  // namespace sluice::cli
