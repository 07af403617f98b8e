// sluice generate: the whole instruction file goes to the engine at once (continuous batching
// over the paged KV cache); rows are appended to <output>.partial as they finish, so nothing
// finished is lost, and the final file is written in input order when the run ends.
#include <QCommandLineParser>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "app/cli/cli_command.h"
#include "app/cli/cli_options.h"
#include "app/cli/progress_printer.h"
#include "engine/core/error.h"
#include "engine/data/prompt_rows.h"
#include "engine/model_session.h"

namespace sluice::cli {

namespace {

constexpr const char* kCommand = "generate";

struct RowResult {
  std::vector<FinishedRequest> samples;  // by sample index once complete
  int num_finished = 0;
};

std::string dump_row(const nlohmann::json& row) {
  return row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json sample_json(const FinishedRequest& f, bool with_token_ids) {
  nlohmann::json s;
  s["output"] = f.output_text;
  s["output_tokens"] = f.output_token_ids.size();
  s["finish_reason"] = to_string(f.finish_reason);
  if (!f.error.empty()) s["error"] = f.error;
  if (with_token_ids) s["output_token_ids"] = f.output_token_ids;
  return s;
}

nlohmann::json row_json(const PromptRow& row, size_t row_idx, const RowResult& result, bool with_token_ids) {
  nlohmann::json out;
  out["id"] = row.id.is_null() ? nlohmann::json(row_idx) : row.id;
  out["prompt"] = row.prompt;
  const FinishedRequest& first = result.samples.front();
  out["prompt_tokens"] = first.num_prompt_tokens;
  if (result.samples.size() == 1) {
    out.update(sample_json(first, with_token_ids));
  } else {
    nlohmann::json samples = nlohmann::json::array();
    for (const auto& s : result.samples) samples.push_back(sample_json(s, with_token_ids));
    out["samples"] = std::move(samples);
  }
  double total_ms = 0.0;
  for (const auto& s : result.samples) total_ms = std::max(total_ms, s.total_ms);
  out["timings"] = {{"queue_ms", first.queue_ms}, {"ttft_ms", first.ttft_ms}, {"total_ms", total_ms}};
  return out;
}

struct GenerateArgs {
  std::string model_path, tokenizer_path, input_path, output_path, device;
  size_t limit = 0;
  bool with_token_ids = false;
  bool quiet = false;
  int num_threads = 0;
  EngineConfig engine;
  SamplingParams sampling;
};

GenerateArgs parse_args(const QStringList& args) {
  QCommandLineParser parser;
  parser.setApplicationDescription("Generate one output per row of an instruction file (JSONL {\"prompt\", \"id\"}).");
  parser.addHelpOption();
  parser.addOptions({
      {"model", "Model: a Hugging Face directory, a .gguf file or a llama2.c .bin.", "PATH"},
      {"tokenizer", "Tokenizer file, when not beside or inside the model.", "PATH"},
      {"input", "Instruction file: JSONL rows {\"prompt\": ..., \"id\": ...} (or an Alpaca JSON array).", "FILE"},
      {"output", "Where to write the JSONL results (input order).", "FILE"},
      {"limit", "Only the first N rows.", "N"},
      {"token-ids", "Also write output_token_ids."},
      {"quiet", "No progress on stderr."},
  });
  add_sampling_options(parser);
  add_engine_options(parser);
  QStringList argv = args;
  argv.prepend("sluice generate");
  if (!parser.parse(argv)) throw UsageError(parser.errorText().toStdString());
  if (parser.isSet("help")) {
    std::printf("%s", parser.helpText().toStdString().c_str());
    std::printf("\nExit status: 0 all rows done, 3 some rows failed (each is in the output with its error),\n"
                "1 the run failed, 2 a usage error.\n");
    std::exit(0);
  }
  if (!parser.positionalArguments().isEmpty()) {
    throw UsageError("unexpected argument '" + parser.positionalArguments().front().toStdString() + "'");
  }
  GenerateArgs a;
  a.model_path = required_option(parser, "model").toStdString();
  a.tokenizer_path = parser.value("tokenizer").toStdString();
  a.input_path = required_option(parser, "input").toStdString();
  a.output_path = required_option(parser, "output").toStdString();
  a.limit = static_cast<size_t>(option_int(parser, "limit", 0, 1, 1LL << 40));
  a.with_token_ids = parser.isSet("token-ids");
  a.quiet = parser.isSet("quiet");
  a.sampling = read_sampling_options(parser);
  a.engine = read_engine_options(parser);
  a.num_threads = read_thread_count(parser);
  a.device = read_device(parser);
  return a;
}

// Runs the whole file through the engine; returns the number of rows that ended in an error.
size_t run_job(const GenerateArgs& a) {
  const std::vector<PromptRow> rows = read_prompt_file(a.input_path, a.limit);
  ModelSession session = open_model_session(a.model_path, a.tokenizer_path);
  if (!a.quiet) {
    std::fprintf(stderr, "model: %s (%s, %s, %.1f MB)\ntokenizer: %s\n", session.model->config.describe().c_str(),
                 session.model->format_name().c_str(), session.model->weight_dtypes().c_str(),
                 static_cast<double>(session.model->weight_bytes()) / 1e6, session.tokenizer->describe().c_str());
  }
  Engine engine(session.model->config, *session.tokenizer, make_backend(*session.model, a.device, a.num_threads),
                a.engine);

  const EncodeOptions encode{.add_bos = session.tokenizer->add_bos_default()};
  std::map<RequestId, size_t> row_of;
  for (size_t i = 0; i < rows.size(); ++i) {
    row_of[engine.add_request(session.tokenizer->encode(rows[i].prompt, encode), a.sampling, i)] = i;
  }

  const std::string partial_path = a.output_path + ".partial";
  std::ofstream partial(partial_path, std::ios::trunc);
  if (!partial) fail(partial_path, ": cannot write");
  std::vector<RowResult> results(rows.size());
  size_t rows_done = 0, rows_failed = 0;
  ProgressPrinter progress(rows.size(), a.quiet);
  while (engine.has_unfinished()) {
    StepResult step = engine.step();
    for (auto& f : step.finished) {
      const size_t row_idx = row_of.at(f.group_id);
      RowResult& r = results[row_idx];
      r.samples.resize(static_cast<size_t>(a.sampling.n));
      const size_t sample_idx = f.sample_idx;
      r.samples[sample_idx] = std::move(f);
      if (++r.num_finished == a.sampling.n) {
        ++rows_done;
        bool failed = false;
        for (const auto& s : r.samples) failed |= s.finish_reason == FinishReason::Error;
        if (failed) {
          ++rows_failed;
          progress.note(str_cat(a.input_path, ":", rows[row_idx].line, ": ", r.samples.front().error));
        }
        partial << dump_row(row_json(rows[row_idx], row_idx, r, a.with_token_ids)) << '\n';
        partial.flush();
      }
    }
    progress.update(step.stats, rows_done);
  }
  progress.finish(rows_done);

  const std::string tmp_path = a.output_path + ".tmp";
  {
    std::ofstream out(tmp_path, std::ios::trunc);
    if (!out) fail(tmp_path, ": cannot write");
    for (size_t i = 0; i < rows.size(); ++i) out << dump_row(row_json(rows[i], i, results[i], a.with_token_ids)) << '\n';
    out.flush();
    if (!out) fail(tmp_path, ": write failed (disk full?); the finished rows are in ", partial_path);
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
      print_error(kCommand, str_cat(failed, " row(s) failed; each is in ", parsed.output_path, " with its error"));
      return 3;
    }
    return 0;
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 1;
  }
}

}  // namespace sluice::cli
