// sluice bench schemas: a folder of JSON Schema subsets (JSONSchemaBench's layout) compiled as
// jobs compile them and, with a model, generated from; one table per run (schema_bench.h).
#include <QCommandLineParser>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/cli/cli_command.h"
#include "app/cli/cli_options.h"
#include "app/cli/schema_bench.h"
#include "engine/backend/device.h"
#include "engine/core/error.h"

namespace sluice::cli {

namespace {

constexpr const char* kCommand = "bench schemas";
constexpr size_t kMaxUnsoundShown = 10;

struct SchemaBenchArgs {
  std::string dir, model_path, tokenizer_path;
  std::vector<JsonWhitespace> whitespaces{JsonGrammarOptions{}.whitespace};
  SchemaBenchSpec spec;
};

void add_schema_bench_options(QCommandLineParser& parser) {
  parser.setApplicationDescription(
      "Compile every JSON Schema of DIR/<subset>/*.json as a job would and, with --model, "
      "generate rows constrained to the first schemas of each subset; print one table.");
  parser.addHelpOption();
  parser.addOptions({
      {"dir", "Folder of subsets: DIR/<subset>/*.json (JSONSchemaBench's data folder).", "DIR"},
      {"model", "Model to generate with (without it: compile statistics only).", "PATH"},
      {"tokenizer", "Tokenizer file, when not beside or inside the model.", "PATH"},
      {"rows-per-schema", "Rows generated per schema (default 2).", "N"},
      {"limit", "Schemas per subset that generate rows: the first N compiled (default 20).", "N"},
      {"max-tokens", "New tokens per row at most (default 256).", "N"},
      {"temperature", "Sampling temperature (default 1).", "T"},
      {"seed", "Sampling seed (default 0).", "N"},
      {"json-whitespace", "flexible, compact or both (default: the grammar's default, flexible).",
       "MODE"},
      {"schema-mode", "strict (default) or best-effort.", "MODE"},
  });
  add_engine_options(parser);
}

SchemaBenchArgs parse_args(const QStringList& args) {
  QCommandLineParser parser;
  add_schema_bench_options(parser);
  parse_command_line(parser, args, "bench schemas");
  SchemaBenchArgs a;
  a.dir = required_option(parser, "dir").toStdString();
  a.model_path = parser.value("model").toStdString();
  a.tokenizer_path = parser.value("tokenizer").toStdString();
  if (!a.tokenizer_path.empty() && a.model_path.empty())
    throw UsageError("--tokenizer needs --model");
  SchemaBenchSpec& spec = a.spec;
  spec.rows_per_schema = static_cast<int>(option_int(parser, "rows-per-schema", 2, 1, 1024));
  spec.max_generated_schemas = static_cast<size_t>(option_int(parser, "limit", 20, 0, 1LL << 40));
  spec.sampling.max_tokens = static_cast<int>(option_int(parser, "max-tokens", 256, 1, 1 << 20));
  spec.sampling.temperature = static_cast<float>(option_double(parser, "temperature", 1.0));
  if (spec.sampling.temperature < 0) throw UsageError("--temperature must be >= 0");
  spec.sampling.seed = static_cast<uint64_t>(option_int(parser, "seed", 0, 0, 1LL << 62));
  try {
    const std::string whitespace = parser.value("json-whitespace").toLower().toStdString();
    if (whitespace == "both") {
      a.whitespaces = {JsonWhitespace::Flexible, JsonWhitespace::Compact};
    } else if (!whitespace.empty()) {
      a.whitespaces = {parse_json_whitespace(whitespace)};
    }
    if (parser.isSet("schema-mode"))
      spec.schema_mode = parse_schema_mode(parser.value("schema-mode").toLower().toStdString());
  } catch (const Error& e) {
    throw UsageError(std::string(e.what()) + " (--json-whitespace also takes both)");
  }
  spec.engine = read_engine_options(parser);
  spec.num_threads = read_thread_count(parser);
  spec.device = read_device(parser);
  return a;
}

double share(size_t part, size_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// The sum of the subsets' results of one whitespace mode, as an "all" row.
SchemaSubsetResult sum_results(const std::vector<SchemaSubsetResult>& results,
                               JsonWhitespace whitespace) {
  SchemaSubsetResult all;
  all.subset = "all";
  all.whitespace = whitespace;
  for (const SchemaSubsetResult& r : results) {
    if (r.whitespace != whitespace) continue;
    all.num_schemas += r.num_schemas;
    all.num_compiled += r.num_compiled;
    all.compile_ms.insert(all.compile_ms.end(), r.compile_ms.begin(), r.compile_ms.end());
    all.num_generated_schemas += r.num_generated_schemas;
    all.num_rows += r.num_rows;
    all.num_valid += r.num_valid;
    all.num_max_tokens += r.num_max_tokens;
    all.num_errors += r.num_errors;
    all.mask_us.insert(all.mask_us.end(), r.mask_us.begin(), r.mask_us.end());
  }
  return all;
}

void print_row(const SchemaSubsetResult& r, bool has_model) {
  std::printf("| %s | %s | %zu | %.1f%% | %.2f | %.2f |", r.subset.c_str(), to_string(r.whitespace),
              r.num_schemas, share(r.num_compiled, r.num_schemas), percentile(r.compile_ms, 0.5),
              percentile(r.compile_ms, 0.99));
  if (has_model) {
    const std::vector<double> mask_us(r.mask_us.begin(), r.mask_us.end());
    std::printf(" %.1f | %.1f | %zu | %zu | %.1f%% | %.1f%% |", percentile(mask_us, 0.5),
                percentile(mask_us, 0.99), r.num_generated_schemas, r.num_rows,
                share(r.num_valid, r.num_rows), share(r.num_max_tokens, r.num_rows));
  }
  std::printf("\n");
}

void print_table(const std::vector<SchemaSubsetResult>& results, const SchemaBenchArgs& a,
                 const ModelSession* session) {
  const SchemaBenchSpec& spec = a.spec;
  std::printf("schemas: %s, %s mode\n", a.dir.c_str(), to_string(spec.schema_mode));
  if (session) {
    std::printf(
        "model: %s (%s); %d rows for each of the first %zu compiled schemas per subset, prompt "
        "\"%s\", temperature %g, seed %llu, max_tokens %d, %s\n",
        session->model->config.describe().c_str(), a.model_path.c_str(), spec.rows_per_schema,
        spec.max_generated_schemas, spec.prompt.c_str(),
        static_cast<double>(spec.sampling.temperature),
        static_cast<unsigned long long>(spec.sampling.seed), spec.sampling.max_tokens,
        spec.device.c_str());
  }
  std::printf("\n| subset | whitespace | schemas | compiled | compile p50 ms | compile p99 ms |");
  if (session)
    std::printf(" mask p50 us | mask p99 us | schemas run | rows | valid | hit max_tokens |");
  std::printf("\n|---|---|---:|---:|---:|---:|%s\n",
              session ? "---:|---:|---:|---:|---:|---:|" : "");
  for (const SchemaSubsetResult& r : results) print_row(r, session != nullptr);
  for (const JsonWhitespace whitespace : a.whitespaces)
    print_row(sum_results(results, whitespace), session != nullptr);
  std::printf(
      "\ncompiled: schemas that build_grammar compiles (through a GrammarCache, as a job does) "
      "in this mode;\nthe others are refused, unsatisfiable or not JSON. compile p50/p99: wall "
      "time of each compiled schema's\nbuild.");
  if (session) {
    std::printf(
        " mask p50/p99: the grammar's next-token mask per row per step (first use of a\n"
        "stack context included). schemas run: the first compiled ones of the subset, each "
        "generating the rows.\nvalid: rows the schema's full validator accepts (OutputCheck). hit "
        "max_tokens: rows that ended by\nmax_tokens (cut off, so almost always invalid).");
  }
  std::printf("\n");
}

// Prints the outputs the grammar completed and the validator refused (a grammar soundness bug).
void print_unsound(const std::vector<SchemaSubsetResult>& results) {
  size_t total = 0;
  for (const SchemaSubsetResult& r : results) total += r.unsound.size();
  if (total == 0) {
    std::printf("\ngrammar-complete outputs the validator refused: none\n");
    return;
  }
  std::printf("\ngrammar-complete outputs the validator refused: %zu (first %zu)\n", total,
              std::min(total, kMaxUnsoundShown));
  size_t shown = 0;
  for (const SchemaSubsetResult& r : results) {
    for (const UnsoundOutput& u : r.unsound) {
      if (shown++ == kMaxUnsoundShown) return;
      std::printf("%s (%s): %s\n  output: %s\n", u.schema_path.c_str(), to_string(r.whitespace),
                  u.reason.c_str(),
                  nlohmann::json(u.output)
                      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                      .c_str());
    }
  }
}

}  // namespace

int run_bench_schemas(const QStringList& args) {
  SchemaBenchArgs a;
  try {
    a = parse_args(args);
  } catch (const UsageError& e) {
    print_error(kCommand, std::string(e.what()) + " (see sluice bench schemas --help)");
    return 2;
  }
  try {
    const std::vector<SchemaSubset> subsets = list_schema_subsets(a.dir);
    std::unique_ptr<ModelSession> session;
    if (!a.model_path.empty()) {
      resolve_device(a.spec.device);  // a missing GPU is reported before loading
      session = std::make_unique<ModelSession>(open_model_session(a.model_path, a.tokenizer_path));
    }
    std::vector<SchemaSubsetResult> results;
    for (const SchemaSubset& subset : subsets) {
      for (const JsonWhitespace whitespace : a.whitespaces) {
        std::fprintf(stderr, "bench schemas: %s, %s whitespace (%zu schemas)...\n",
                     subset.name.c_str(), to_string(whitespace), subset.schema_paths.size());
        results.push_back(run_schema_subset(subset, whitespace, a.spec, session.get()));
      }
    }
    print_table(results, a, session.get());
    print_unsound(results);
    return 0;
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 1;
  }
}

}  // namespace sluice::cli
